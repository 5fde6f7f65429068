/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The built-in resolver: kernel callchain entries become kernel frames under
 * [kernel.kallsyms], user addresses "module+0xoffset" (file offset), unmapped
 * ones "[unknown]+0xaddr"; in DWARF mode the user IP comes from the registers.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "default-resolver.h"
#include "test-util.h"

/* The frames of a stack, leaf first, as "function|module|kernel" strings joined by ';'. */
static void describe(const Profile *p, uint32_t stack, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (uint32_t n = stack; n != PROFILE_NONE; n = p->stacks[n].parent) {
		const ProfileFrame *f = &p->frames[p->stacks[n].frame];

		len += (size_t)snprintf(buf + len, size - len, "%s%s|%s|%d", len ? ";" : "",
					profile_string(p, f->function),
					f->module == PROFILE_NONE ? "-" : profile_string(p, f->module),
					f->kernel);
		if (len >= size)
			break;
	}
}

static ProcessMaps *test_maps(void)
{
	ProcessMaps *m = NULL;

	if (process_maps_new(42, &m) < 0 ||
	    process_maps_add(m, &(ProcessMapping){ .start = 0x400000, .end = 0x401000,
						   .pgoff = 0x2000, .path = "/usr/bin/app" }) < 0 ||
	    process_maps_add(m, &(ProcessMapping){ .start = 0x7f0000000000ULL,
						   .end = 0x7f0000010000ULL, .path = "[vdso]" }) < 0)
		abort();
	return m;
}

static void test_fp_chain(void)
{
	_cleanup_profile_ Profile *p = NULL;
	ProcessMaps *m = test_maps();
	FrameCache *cache = NULL;
	const uint64_t chain[] = {
		(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81001234ULL,
		(uint64_t)PERF_CONTEXT_USER, 0x400010, 0x7f0000000100ULL, 0x1234,
	};
	PerfSample s = { .pid = 42, .tid = 42, .kernel_mode = true, .ip = 0xffffffff81001234ULL,
			 .n_callchain = ELEMENTSOF(chain), .callchain = chain };
	SampleStack st;
	char buf[512];
	int r;

	CHECK(profile_new(&p) == 0 && frame_cache_new(&cache) == 0, "setup");
	for (int round = 0; round < 2; round++) {
		/* the second round comes from the cache and must give the same stack */
		r = default_resolve_sample(cache, &s, m, p, &st);
		CHECK(r == 0 && st.stack != PROFILE_NONE && !st.truncated, "resolve: %d", r);
		describe(p, st.stack, buf, sizeof(buf));
		CHECK(strcmp(buf, "[kernel.kallsyms]+0xffffffff81001234|[kernel.kallsyms]|1;"
				  "app+0x2010|/usr/bin/app|0;"
				  "[vdso]+0x100|[vdso]|0;"
				  "[unknown]+0x1234|-|0") == 0,
		      "round %d: %s", round, buf);
	}
	CHECK(p->n_frames == 4, "frames %u", p->n_frames);
	CHECK(p->frames[1].address == 0x2010, "module-relative address %llx",
	      (unsigned long long)p->frames[1].address);

	/* a mapping change invalidates the cache: the same address, another module */
	CHECK(process_maps_add(m, &(ProcessMapping){ .start = 0x400000, .end = 0x401000,
						     .path = "/usr/lib/other.so" }) == 0, "remap");
	r = default_resolve_sample(cache, &s, m, p, &st);
	describe(p, st.stack, buf, sizeof(buf));
	CHECK(r == 0 && strstr(buf, "other.so+0x10|/usr/lib/other.so|0"), "after remap: %s", buf);

	frame_cache_free(cache);
	process_maps_free(m);
}

static void test_dwarf_user_ip(void)
{
	_cleanup_profile_ Profile *p = NULL;
	ProcessMaps *m = test_maps();
	const uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL };
	uint64_t regs[24] = {};
	PerfSample s = { .pid = 42, .tid = 43, .kernel_mode = true, .n_callchain = 2,
			 .callchain = chain, .regs_abi = PERF_SAMPLE_REGS_ABI_64,
			 .regs_mask = PERF_SAMPLE_REGS_USER_MASK, .regs = regs };
	SampleStack st;
	char buf[512];
	int r;

	s.n_regs = (uint32_t)__builtin_popcountll(PERF_SAMPLE_REGS_USER_MASK);
	regs[8] = 0x400020; /* PERF_REG_X86_IP is bit 8, index 8 in this mask */
	CHECK(profile_new(&p) == 0, "setup");

	/* in the kernel: kernel frames, then the user IP from the registers */
	r = default_resolve_sample(NULL, &s, m, p, &st);
	describe(p, st.stack, buf, sizeof(buf));
	CHECK(r == 0 && strcmp(buf, "[kernel.kallsyms]+0xffffffff81000010|[kernel.kallsyms]|1;"
				    "app+0x2020|/usr/bin/app|0") == 0, "kernel sample: %s", buf);

	/* in user space: the sample IP itself */
	s = (PerfSample){ .pid = 42, .tid = 43, .ip = 0x400030 };
	r = default_resolve_sample(NULL, &s, m, p, &st);
	describe(p, st.stack, buf, sizeof(buf));
	CHECK(r == 0 && strcmp(buf, "app+0x2030|/usr/bin/app|0") == 0, "user sample: %s", buf);

	/* a kernel thread: no registers, no user frame */
	s = (PerfSample){ .pid = 2, .tid = 2, .kernel_mode = true, .n_callchain = 2,
			  .callchain = chain };
	r = default_resolve_sample(NULL, &s, m, p, &st);
	describe(p, st.stack, buf, sizeof(buf));
	CHECK(r == 0 && strcmp(buf, "[kernel.kallsyms]+0xffffffff81000010|[kernel.kallsyms]|1") == 0,
	      "kernel thread: %s", buf);

	/* nothing at all: an empty stack, not an error */
	s = (PerfSample){ .pid = 2, .tid = 2, .kernel_mode = true };
	r = default_resolve_sample(NULL, &s, m, p, &st);
	CHECK(r == 0 && st.stack == PROFILE_NONE, "empty: r %d stack %u", r, st.stack);
	process_maps_free(m);
}

static void test_deep_chain(void)
{
	_cleanup_profile_ Profile *p = NULL;
	static uint64_t chain[2000];
	PerfSample s = { .pid = 1, .tid = 1, .callchain = chain, .n_callchain = ELEMENTSOF(chain) };
	SampleStack st;

	chain[0] = (uint64_t)PERF_CONTEXT_USER;
	for (size_t i = 1; i < ELEMENTSOF(chain); i++)
		chain[i] = 0x1000 + i;
	CHECK(profile_new(&p) == 0, "setup");
	CHECK(default_resolve_sample(NULL, &s, NULL, p, &st) == 0 && st.truncated &&
		      st.stack != PROFILE_NONE, "deep chain: truncated %d", st.truncated);
}

int main(void)
{
	test_fp_chain();
	test_dwarf_user_ip();
	test_deep_chain();
	return test_result();
}
