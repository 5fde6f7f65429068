/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where a DWARF walk of a sample stopped and why, and its continuation with
 * the kernel's frame-pointer callchain of the same sample: code without CFI
 * (V8's builtins and JIT code, hand-written assembly) usually keeps frame
 * pointers, so where the CFI walk ends the frame-pointer chain often goes on.
 * A callchain entry is taken only as a return address into mapped code (and
 * into a module's code only right after a call instruction), and the chain
 * is spliced only where it meets the DWARF walk.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "address-space.h"
#include "perf-sample.h"
#include "process-maps.h"

typedef enum UnwindEnd {
	UNWIND_END_COMPLETE,   /* the outermost frame (_start, clone) */
	UNWIND_END_DEPTH,      /* the depth bound */
	UNWIND_END_NO_MODULE,  /* a frame in code of no module: JIT code, or a broken walk */
	UNWIND_END_NO_CFI,     /* a frame in a module without CFI for it */
	UNWIND_END_STACK_COPY, /* the caller's frame lies beyond the copied stack */
	UNWIND_END_BROKEN,     /* the CFI led nowhere (loop, zero return address) */
	_UNWIND_END_MAX,
} UnwindEnd;

const char *unwind_end_to_string(UnwindEnd e);

/* The section of the sample's callchain after marker 'context' (PERF_CONTEXT_USER/KERNEL). */
size_t sample_callchain_section(const PerfSample *s, uint64_t context, const uint64_t **ret);

/*
 * Why a walk of 's' that produced pcs[0, n) stopped ('truncated' as the
 * unwinder said, 'max' the depth bound). pcs are lookup addresses as
 * unwind_sample() gives them.
 */
UnwindEnd unwind_end_classify(AddressSpace *space, const PerfSample *s, const uint64_t *pcs,
			      size_t n, size_t max, bool truncated);

/*
 * Continue the walk pcs[0, n) with the frames of the sample's user callchain
 * below its last frame, as lookup addresses, up to 'max' in all. Returns the
 * new count (n when the chain does not meet the walk or offers nothing
 * valid); *ret_complete says the chain ran to its own end.
 */
size_t unwind_continue_with_callchain(AddressSpace *space, const PerfSample *s,
				      const ProcessMaps *maps, uint64_t *pcs, size_t n, size_t max,
				      bool *ret_complete);
