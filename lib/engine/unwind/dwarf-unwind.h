/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * DWARF (CFI) unwinding of one sample's user stack with libdwfl: registers
 * from the sample's user registers, stack memory from its copy of the user
 * stack, everything else (rare: CFI that reads code) from the mapped files.
 * Uses the address space's Dwfl; attaches to it once.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "address-space.h"
#include "perf-sample.h"

typedef struct Unwinder Unwinder;

/* Free the address space (whose Dwfl then refers to the unwinder) before the unwinder. */
int unwinder_new(AddressSpace *space, Unwinder **ret);
Unwinder *unwinder_free(Unwinder *u);

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
