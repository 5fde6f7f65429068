/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "synthetic-profile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"

typedef struct FrameSpec {
	const char *function, *module, *build_id, *file;
	uint32_t line;
	uint64_t address;
	bool inlined, kernel;
} FrameSpec;

#define APP "/usr/bin/app"
#define APP_BUILD_ID "4f1a9c0e2b7d5a3c8e6f1d2b4a6c8e0f12345678"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBC_BUILD_ID "aa11bb22cc33dd44ee55ff6600112233"
#define KERNEL PROFILE_KERNEL_MODULE

/* Frames by name; stacks below list them leaf first. */
static const FrameSpec mixed_frames[] = {
	{ "main", APP, APP_BUILD_ID, "src/main.c", 40, 0x1100, false, false }, /* 0 */
	{ "run_worker", APP, APP_BUILD_ID, "src/worker.c", 88, 0x1200, false, false }, /* 1 */
	{ "inline_helper", APP, APP_BUILD_ID, "src/util.h", 12, 0x1200, true, false }, /* 2 */
	{ "compute", APP, APP_BUILD_ID, "src/compute.c", 10, 0x1300, false, false }, /* 3 */
	{ "compute", APP, APP_BUILD_ID, "src/compute.c", 17, 0x1340, false, false }, /* 4 */
	{ "parse;tokens", APP, APP_BUILD_ID, "src/parse.c", 5, 0x1400, false, false }, /* 5 */
	{ "ünïcødé_λ_計算", APP, APP_BUILD_ID, "src/ü.c", 7, 0x1500, false, false }, /* 6 */
	{ "operator new(unsigned long)", LIBC, LIBC_BUILD_ID, NULL, 0, 0x9a000, false, false }, /* 7 */
	{ "__libc_write", LIBC, LIBC_BUILD_ID, NULL, 0, 0x9b000, false, false }, /* 8 */
	{ "entry_SYSCALL_64", KERNEL, NULL, NULL, 0, 0xffffffff81000000, false, true }, /* 9 */
	{ "do_syscall_64", KERNEL, NULL, NULL, 0, 0xffffffff81001000, false, true }, /* 10 */
	{ "ksys_write", KERNEL, NULL, NULL, 0, 0xffffffff81002000, false, true }, /* 11 */
	{ "tmpl<a&b> \"q\" 'x'", APP, APP_BUILD_ID, "src/t.cc", 3, 0x1600, false, false }, /* 12 */
	{ "/usr/bin/app+0x1f00", APP, APP_BUILD_ID, NULL, 0, 0x1f00, false, false }, /* 13 */
	{ "deep_inline", APP, APP_BUILD_ID, "src/util.h", 30, 0x1200, true, false }, /* 14 */
	{ "__libc_start_main", LIBC, LIBC_BUILD_ID, NULL, 0, 0x29d90, false, false }, /* 15 */
	{ "0x7f00deadbeef", NULL, NULL, NULL, 0, 0x7f00deadbeef, false, false }, /* 16 */
};

static const FrameSpec hostile_frames[] = {
	{ "line\nbreak", APP, APP_BUILD_ID, NULL, 0, 0x1700, false, false },
	{ "bad\xff\xfeutf8", APP, APP_BUILD_ID, NULL, 0, 0x1800, false, false },
	{ "ctl\x01\x1f;x\r", APP, APP_BUILD_ID, NULL, 0, 0x1900, false, false },
};

#define END -1
/* Leaf-first frame indexes; index 100+i is hostile_frames[i]. */
static const int mixed_stacks[][12] = {
	{ 3, 1, 0, 15, END },
	{ 4, 1, 0, 15, END },          /* same names as the first: merges in the folding */
	{ 2, 1, 0, 15, END },          /* inline_helper inlined into run_worker */
	{ 14, 2, 1, 0, 15, END },      /* two inline levels */
	{ 5, 3, 1, 0, 15, END },
	{ 6, 1, 0, 15, END },
	{ 11, 10, 9, 8, 1, 0, 15, END }, /* kernel on top of user */
	{ 7, 12, 0, 15, END },
	{ 13, 0, 15, END },
	{ 16, 13, 0, 15, END },
	{ 0, 15, END },
	{ 11, 10, 9, END },            /* kernel only */
	{ 100, 1, 0, 15, END },
	{ 101, 1, 0, 15, END },
	{ 102, 101, 0, 15, END },
};

static uint64_t next_random(uint64_t *state)
{
	/* splitmix64: deterministic and good enough to spread test data */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int intern(Profile *p, const char *s, uint32_t *ret)
{
	if (!s) {
		*ret = PROFILE_NONE;
		return 0;
	}
	return profile_intern_string(p, s, ret);
}

static int intern_spec(Profile *p, const FrameSpec *spec, uint32_t *ret)
{
	ProfileFrame frame = {
		.line = spec->line, .address = spec->address,
		.inlined = spec->inlined, .kernel = spec->kernel,
	};
	int r;

	if ((r = intern(p, spec->function, &frame.function)) < 0 ||
	    (r = intern(p, spec->module, &frame.module)) < 0 ||
	    (r = intern(p, spec->build_id, &frame.build_id)) < 0 ||
	    (r = intern(p, spec->file, &frame.file)) < 0)
		return r;
	return profile_intern_frame(p, &frame, ret);
}

/* The mixed stacks, interned; returns how many. */
static int intern_mixed_stacks(Profile *p, bool hostile, uint32_t stacks[static ELEMENTSOF(mixed_stacks)],
			       size_t *ret_n)
{
	size_t n_stacks = ELEMENTSOF(mixed_stacks) - (hostile ? 0 : 3);
	int r;

	for (size_t s = 0; s < n_stacks; s++) {
		uint32_t frames[12];
		size_t n = 0;

		for (; mixed_stacks[s][n] != END; n++) {
			int i = mixed_stacks[s][n];
			const FrameSpec *spec = i >= 100 ? &hostile_frames[i - 100] : &mixed_frames[i];

			r = intern_spec(p, spec, &frames[n]);
			if (r < 0)
				return r;
		}
		r = profile_intern_stack_leaf_first(p, frames, n, &stacks[s]);
		if (r < 0)
			return r;
	}
	*ret_n = n_stacks;
	return 0;
}

static int build_mixed(Profile *p, bool hostile)
{
	uint32_t stacks[ELEMENTSOF(mixed_stacks)];
	uint64_t state = 42;
	size_t n_stacks;
	int r;

	r = intern_mixed_stacks(p, hostile, stacks, &n_stacks);
	if (r < 0)
		return r;
	for (uint32_t t = 0; t < 40; t++) {
		char name[32];

		snprintf(name, sizeof(name), t == 0 ? "app" : "worker-%u", t);
		r = profile_set_thread(p, 4242 + t, name);
		if (r < 0)
			return r;
	}
	for (uint64_t i = 0; i < 6000; i++) {
		uint64_t x = next_random(&state);
		uint32_t tid = 4242 + (uint32_t)(x % 40);
		/* skewed so counts differ: low stack indexes are hotter */
		size_t s = (size_t)((x >> 8) % n_stacks) * ((x >> 40) % 3 == 0) % n_stacks;
		uint32_t stack = (x >> 20) % 97 == 0 ? PROFILE_NONE : stacks[s];

		r = profile_add_sample(p, tid, i * 1010101, stack);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Random stacks of depth 4..40 over a pool of functions in three modules. */
static int build_random(Profile *p, size_t n_samples, uint32_t n_stacks, uint64_t seed)
{
	_cleanup_free_ uint32_t *leaves = calloc(n_stacks ? n_stacks : 1, sizeof(uint32_t));
	uint32_t modules[3], funcs[2000];
	uint64_t state = seed;
	int r;

	if (!leaves)
		return -ENOMEM;
	r = intern(p, APP, &modules[0]);
	if (r >= 0)
		r = intern(p, LIBC, &modules[1]);
	if (r >= 0)
		r = intern(p, KERNEL, &modules[2]);
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < ELEMENTSOF(funcs); i++) {
		ProfileFrame frame = { .module = modules[i % 3], .build_id = PROFILE_NONE,
				       .file = PROFILE_NONE, .address = 0x1000 + 16 * i,
				       .kernel = i % 3 == 2 };
		char name[64];

		snprintf(name, sizeof(name), "function_%u_%s", i, i % 3 == 2 ? "k" : "u");
		r = intern(p, name, &frame.function);
		if (r < 0)
			return r;
		r = profile_intern_frame(p, &frame, &funcs[i]);
		if (r < 0)
			return r;
	}
	/* Each stack extends an earlier one by a few frames, so they share prefixes as real ones do. */
	for (uint32_t s = 0; s < n_stacks; s++) {
		uint32_t node = s == 0 ? PROFILE_NONE : leaves[next_random(&state) % s];
		uint32_t extra = 1 + next_random(&state) % 4;

		if (node != PROFILE_NONE && p->n_stacks > 0) {
			/* keep depth bounded by restarting from a root now and then */
			uint32_t depth = 0;

			for (uint32_t n = node; n != PROFILE_NONE; n = p->stacks[n].parent)
				depth++;
			if (depth > 36)
				node = PROFILE_NONE;
		}
		for (uint32_t e = 0; e < extra; e++) {
			uint32_t fn = funcs[next_random(&state) % ELEMENTSOF(funcs)];

			r = profile_intern_stack(p, node, fn, &node);
			if (r < 0)
				return r;
		}
		leaves[s] = node;
	}
	for (uint32_t t = 0; t < 8; t++) {
		r = profile_set_thread(p, 1000 + t, t == 0 ? "main" : "worker");
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < n_samples; i++) {
		uint64_t x = next_random(&state);

		r = profile_add_sample(p, 1000 + x % 8, i * 1000000, leaves[(x >> 8) % n_stacks]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Three processes: "app" (pid 100, 5 threads), "db" (pid 200, 3 threads, one named "worker-1"
 * as in app) and an unnamed one (pid 300, 1 thread); a unit; samples without times. */
static int build_processes(Profile *p)
{
	static const struct {
		uint32_t tid, pid;
		const char *thread, *process;
	} threads[] = {
		{ 100, 100, "app", "app" }, { 101, 100, "worker-1", "app" },
		{ 102, 100, "worker-2", "app" }, { 103, 100, "worker-3", "app" },
		{ 104, 100, "worker-4", "app" }, { 200, 200, "db", "db" },
		{ 201, 200, "worker-1", "db" }, { 202, 200, "flush", "db" },
		{ 300, 300, NULL, NULL },
	};
	uint32_t stacks[ELEMENTSOF(mixed_stacks)];
	uint64_t state = 7;
	size_t n_stacks;
	int r;

	p->pid = 0;
	p->multi_process = true;
	p->untimed = true;
	r = profile_set_target(p, "unit:demo.service", "demo.service");
	if (r >= 0)
		r = intern_mixed_stacks(p, false, stacks, &n_stacks);
	if (r < 0)
		return r;
	for (size_t t = 0; t < ELEMENTSOF(threads); t++) {
		r = profile_set_thread(p, threads[t].tid, threads[t].thread);
		if (r >= 0)
			r = profile_set_thread_process(p, threads[t].tid, threads[t].pid,
						       threads[t].process);
		if (r < 0)
			return r;
	}
	for (uint64_t i = 0; i < 3000; i++) {
		uint64_t x = next_random(&state);
		size_t s = (size_t)((x >> 8) % n_stacks) * ((x >> 40) % 3 == 0) % n_stacks;

		r = profile_add_sample(p, threads[x % ELEMENTSOF(threads)].tid, 0, stacks[s]);
		if (r < 0)
			return r;
	}
	return 0;
}

int synthetic_profile(SyntheticKind kind, size_t n_samples, uint32_t n_stacks, uint64_t seed,
		      Profile **ret)
{
	_cleanup_profile_ Profile *p = NULL;
	int r;

	r = profile_new(&p);
	if (r < 0)
		return r;
	p->pid = 4242;
	p->start_unix_nanos = 1700000000123456789ULL;
	p->period_nanos = 1010101;
	p->duration_nanos = 6061000000ULL;
	if (kind == SYNTHETIC_RANDOM)
		r = build_random(p, n_samples, n_stacks, seed);
	else if (kind == SYNTHETIC_PROCESSES)
		r = build_processes(p);
	else
		r = build_mixed(p, kind == SYNTHETIC_HOSTILE);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}
