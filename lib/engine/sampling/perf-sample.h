/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One PERF_RECORD_SAMPLE as the engine parsed it out of a ring, and the hook
 * that turns it into a stack of the session's Profile. This is the contract
 * between sampling (which reads rings) and unwinding (which names frames).
 *
 * Pointers point into the ring or its bounce buffer: valid only during the
 * call that receives the sample. Nothing may keep them.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "process-maps.h"
#include "profile.h"

typedef struct PerfSample {
	uint32_t pid, tid;
	uint64_t time;     /* CLOCK_MONOTONIC nanoseconds (the event uses use_clockid) */
	uint64_t ip;
	bool kernel_mode;  /* the sample hit kernel code (PERF_RECORD_MISC_KERNEL) */

	/* kernel-written callchain, PERF_CONTEXT_* markers included */
	uint64_t n_callchain;
	const uint64_t *callchain;

	/* user registers in sample_regs_user bit order; n_regs 0 if none (kernel thread, ABI_NONE) */
	uint64_t regs_abi;
	uint64_t regs_mask;
	uint32_t n_regs;
	const uint64_t *regs;

	/* copy of the user stack from the sampled SP; only stack_dyn_size bytes are valid */
	uint64_t stack_size;
	uint64_t stack_dyn_size;
	const uint8_t *stack;

	/*
	 * An aggregated sample (the bpf backend counts stacks in the kernel):
	 * PERF_SAMPLE_WEIGHT, the samples it stands for (0: an ordinary one), and
	 * PERF_SAMPLE_ADDR, the address space they were counted in (its exec
	 * generation, process-table.h). perf sessions never request either.
	 */
	uint64_t weight;
	uint64_t addr;
} PerfSample;

/*
 * x86-64 user registers the sessions request in perf-dwarf mode, as perf does
 * for --call-graph dwarf: AX..R15 and IP/SP/BP (PERF_REG_X86_* bits 0-11 and
 * 16-23; DS/ES/FS/GS are left out). regs[] holds them in ascending bit order.
 */
#define PERF_SAMPLE_REGS_USER_MASK 0xff0fffULL

/* Register 'perf_reg' (a PERF_REG_X86_* number) of a sample, or -ENOENT if it was not copied. */
static inline int perf_sample_get_reg(const PerfSample *sample, unsigned perf_reg, uint64_t *ret)
{
	uint64_t below;

	if (perf_reg >= 64 || !(sample->regs_mask & (1ULL << perf_reg)))
		return -ENOENT;
	below = sample->regs_mask & ((1ULL << perf_reg) - 1);
	if ((uint32_t)__builtin_popcountll(below) >= sample->n_regs)
		return -ENOENT;
	*ret = sample->regs[__builtin_popcountll(below)];
	return 0;
}

typedef struct SampleStack {
	uint32_t stack;     /* leaf node in the Profile, or PROFILE_NONE */
	bool truncated;     /* the unwinder stopped before the outermost frame */
	bool unwind_failed; /* no user frame could be recovered beyond the IP */
} SampleStack;

/*
 * Resolve a sample to a stack of 'profile'. 'maps' is the target's address
 * space as of this sample. Returns 0 or a negative errno; on failure the
 * sample is still counted, with an empty stack.
 */
typedef int (*SampleResolveFn)(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			       Profile *profile, SampleStack *ret);
