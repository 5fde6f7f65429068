/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Unwinding one sample's copied user stack with compiled CFI tables
 * (cfi-table.h): per frame, one table lookup and at most two reads from the
 * stack copy. It reports exactly what dwarf-unwind.c's libdwfl walk reports
 * for the same sample — the same lookup addresses, the same end and the
 * same "truncated" — or says it cannot (a frame the tables do not express,
 * a read libdw would serve from somewhere other than the stack copy), and
 * then the caller asks libdw.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfi-table.h"

/* Addresses above the copied stack but this close to SP are stack the copy missed. */
#define FRAME_WALK_STACK_REGION_MAX (64ULL << 20)

typedef struct FrameWalkStack {
	uint64_t ip, sp, bp; /* user registers at the sample */
	bool bp_valid;       /* the sample carried rbp */
	const uint8_t *stack; /* copy of [sp, sp + size) */
	uint64_t size;
} FrameWalkStack;

/* The rule for code at lookup address 'pc', or NULL when no table covers it. */
typedef const CfiRule *(*FrameWalkRuleFn)(void *userdata, uint64_t pc);

/*
 * Walk 's' into at most 'max' (> 0) lookup addresses, leaf first (the IP,
 * then return address - 1 for each caller). Returns their number and sets
 * *ret_truncated and *ret_stack_used (bytes above sp the walk read, or
 * wanted to read beyond the copy), or returns -EAGAIN when a frame needs
 * libdw.
 */
int frame_walk(const FrameWalkStack *s, FrameWalkRuleFn rule_of, void *userdata, uint64_t *pcs,
	       size_t max, bool *ret_truncated, uint64_t *ret_stack_used);
