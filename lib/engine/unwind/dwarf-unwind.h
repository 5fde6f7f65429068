/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * DWARF (CFI) unwinding of one sample's user stack: registers from the
 * sample's user registers, stack memory from its copy of the user stack.
 * Each module's CFI is compiled once into a table (cfi-table.h, kept in its
 * SymbolModule) and most samples are walked with those tables alone
 * (frame-walk.h); a sample with a frame the tables cannot express goes to
 * libdwfl's unwinder, which also reads the mapped files when CFI asks for
 * memory outside the stack. Both give the same stacks. Uses the address
 * space's Dwfl; attaches to it once.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "address-space.h"
#include "perf-sample.h"

typedef struct Unwinder Unwinder;

typedef enum UnwindMethod {
	UNWIND_METHOD_TABLES, /* compiled CFI tables, libdwfl where they cannot say (default) */
	UNWIND_METHOD_LIBDW,  /* libdwfl for every sample: the reference the tables must match */
} UnwindMethod;

/* Stack use is counted in KiB buckets: how much of the copy walks read (adaptive stack copy). */
#define UNWIND_STACK_BUCKETS 65

typedef struct UnwinderStats {
	uint64_t table_samples; /* walked with the tables alone */
	uint64_t libdw_samples; /* handed to libdwfl */
	uint64_t exhausted_samples; /* the walk wanted stack beyond the copy */
	/* samples by the stack their walk read above sp: [i] up to i KiB, the last 64 KiB or more */
	uint64_t stack_kib[UNWIND_STACK_BUCKETS];
} UnwinderStats;

/* Free the address space (whose Dwfl then refers to the unwinder) before the unwinder. */
int unwinder_new(AddressSpace *space, Unwinder **ret);
Unwinder *unwinder_free(Unwinder *u);
void unwinder_set_method(Unwinder *u, UnwindMethod method);
void unwinder_get_stats(const Unwinder *u, UnwinderStats *ret);

/*
 * Unwind 'sample' into at most 'max' lookup addresses, leaf first: the IP for
 * the first frame and for frames interrupted by a signal, return address - 1
 * (inside the call) for the others. *ret_truncated is set when unwinding
 * stopped before the outermost frame (stack copy exhausted, no CFI, depth
 * bound, loop). Returns the number of addresses (0 without user registers),
 * or a negative errno.
 */
int unwind_sample(Unwinder *u, const PerfSample *sample, uint64_t *pcs, size_t max,
		  bool *ret_truncated);

/*
 * The stack copy size worth asking for next time, from what the walks so far
 * read: enough for 99.9% of them with a quarter and 1 KiB to spare, rounded
 * to 512 bytes, at least UNWIND_STACK_MIN; twice 'copied' (the size the
 * samples had) when more than 1% wanted more than that; never above
 * 'ceiling'. 0 without samples.
 */
#define UNWIND_STACK_MIN 2048U
uint32_t unwind_suggest_stack_bytes(const UnwinderStats *st, uint32_t copied, uint32_t ceiling);
