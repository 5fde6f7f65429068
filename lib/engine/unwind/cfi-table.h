/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A module's call frame information (.eh_frame) compiled once into a sorted
 * table of PC ranges and the rule that holds in each: where the CFA is
 * (rsp + N, rbp + N, or the PLT's rsp + N + 8 in the second half of each
 * 16-byte stub), where the return address and rbp are saved, and which stack
 * slots restoring the other registers reads. This is what x86-64 code
 * nearly always needs ("stack deltas", as the OpenTelemetry eBPF profiler and
 * samply's framehop do it), so frame-walk.c unwinds with a binary search per
 * frame instead of libdw interpreting the CFI program each time.
 *
 * Rules are read from libdw itself (dwarf_cfi_addrframe() on the module's
 * .eh_frame, the CFI libdwfl's unwinder uses first), so the table says what
 * libdw would do. Anything else — CFA or register expressions, signal
 * frames, registers saved in other registers, PCs without an FDE — is marked
 * CFI_CFA_LIBDW: the unwinder hands those samples to libdw.
 */

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "byte-reader.h"
#include "cleanup.h"

typedef enum CfiCfa {
	CFI_CFA_LIBDW, /* nothing this table can express: ask libdw */
	CFI_CFA_RSP,   /* CFA = rsp + cfa_offset */
	CFI_CFA_RBP,   /* CFA = rbp + cfa_offset */
	CFI_CFA_PLT,   /* CFA = rsp + cfa_offset, + 8 when (pc & 15) >= plt_threshold */
} CfiCfa;

enum {
	CFI_RA_UNDEFINED = 1 << 0,  /* the outermost frame: nothing to return to */
	CFI_RBP_SAVED = 1 << 1,     /* rbp at CFA + rbp_offset */
	CFI_RBP_UNDEFINED = 1 << 2, /* rbp cannot be recovered (else: unchanged) */
	CFI_HAS_SLOTS = 1 << 3,     /* some register is read from [CFA + min_slot, CFA + max_slot] */
};

typedef struct CfiRule {
	int32_t cfa_offset;
	int16_t ra_offset;  /* the return address is at CFA + ra_offset (unless RA_UNDEFINED) */
	int16_t rbp_offset;
	int16_t min_slot, max_slot;
	uint8_t cfa;        /* CfiCfa */
	uint8_t flags;
	uint8_t plt_threshold;
	uint8_t reserved;   /* 0: no padding, rules are compared and stored as bytes */
} CfiRule;

typedef struct CfiTable CfiTable;

/*
 * Compile the .eh_frame of 'mod'. A module without one (or with an encoding
 * this does not read) gets an empty table: every lookup says CFI_CFA_LIBDW.
 * Returns 0 or a negative errno (-ENOMEM).
 */
int cfi_table_build(Dwfl_Module *mod, CfiTable **ret);
CfiTable *cfi_table_free(CfiTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(CfiTable *, cfi_table_free);

/* The rule at ELF address 'addr' (absolute - the module's bias); never NULL. */
const CfiRule *cfi_table_lookup(const CfiTable *t, uint64_t addr);

/* Heap bytes the table holds, and its number of PC ranges. */
size_t cfi_table_bytes(const CfiTable *t);
size_t cfi_table_rows(const CfiTable *t);

/* The table as bytes (for the on-disk symbol cache), and back: -EBADMSG for anything but a
 * table cfi_table_write() wrote on this architecture. */
int cfi_table_write(const CfiTable *t, FILE *f);
int cfi_table_read(ByteReader *r, CfiTable **ret);
