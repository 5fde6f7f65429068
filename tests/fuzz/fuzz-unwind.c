/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-unwind: the stack resolver on samples whose registers, stack copy and
 * callchain are arbitrary, against this process's real address space. The
 * stack copy is the profiled program's memory, so it is untrusted: no
 * register or stack content may make the unwinder read outside the copy,
 * loop, or crash.
 *
 * Input: u8 flags (bit 0: frame-pointer mode, bit 1: kernel frames), u8
 * callchain length, 17 u64 registers (perf order AX..SS, R8..R15 as
 * PERF_SAMPLE_REGS_USER_MASK), the callchain, then the stack bytes. Register
 * values that are small are taken as offsets into this program's text, so
 * the unwinder starts in real code with real CFI.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fuzz-self.h"
#include "stack-resolver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


/* A resolver serves one Profile: both are renewed now and then to bound memory. */
#define RUNS_PER_PROFILE 20000

static StackResolver *resolver[2];
static Profile *profile;
static unsigned runs;
static ProcessMaps *maps;
static uint64_t text_start, text_size;

static void setup(void)
{
	StackResolverOptions o = { .kernel = true, .max_depth = 64 };

	if (!maps)
		fuzz_self_text(&maps, &text_start, &text_size);
	for (int i = 0; i < 2; i++)
		resolver[i] = stack_resolver_free(resolver[i]);
	profile = profile_free(profile);
	o.mode = STACK_UNWIND_DWARF;
	if (stack_resolver_new(&o, &resolver[0]) < 0)
		abort();
	o.mode = STACK_UNWIND_FP;
	if (stack_resolver_new(&o, &resolver[1]) < 0)
		abort();
	if (profile_new(&profile) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t regs[FUZZ_N_REGS] = {}, chain[256];
	PerfSample s = fuzz_self_sample(regs);
	SampleStack st;
	uint8_t flags, n_chain;

	if (runs++ % RUNS_PER_PROFILE == 0)
		setup();
	if (size < 2 + sizeof(regs))
		return 0;
	flags = data[0];
	n_chain = data[1];
	memcpy(regs, data + 2, sizeof(regs));
	data += 2 + sizeof(regs);
	size -= 2 + sizeof(regs);
	for (size_t i = 0; i < FUZZ_N_REGS && text_size; i++)
		if (regs[i] < text_size)
			regs[i] += text_start;
	if ((size_t)n_chain * 8 > size)
		n_chain = (uint8_t)(size / 8);
	memcpy(chain, data, (size_t)n_chain * 8);
	s.callchain = chain;
	s.n_callchain = n_chain;
	data += (size_t)n_chain * 8;
	size -= (size_t)n_chain * 8;
	s.stack = data;
	s.stack_size = s.stack_dyn_size = size;
	s.ip = regs[8]; /* PERF_REG_X86_IP */

	(void)stack_resolver_resolve(resolver[flags & 1], &s, maps, profile, &st);
	return 0;
}
