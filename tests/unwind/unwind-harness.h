/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the unwinding tests and benchmarks: start a workload, profile it
 * with a real sampling session and the stack resolver, and ask questions of
 * the resulting Profile.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf-sample.h"
#include "profile.h"
#include "stack-resolver.h"
#include "test-util.h"

/* Fork and exec argv; returns once the child runs the new program. */
int harness_spawn(char *const argv[], pid_t *ret);
/* Copy a file (a workload to a place of the test's own). */
int harness_copy_file(const char *from, const char *to, mode_t mode);
/* Remove directory 'dir' and the files in it (a workload's scratch directory). */
int harness_remove_dir(const char *dir);
/*
 * Create 'go_file' (a workload waits for it), then wait until /proc/PID/maps has
 * 'count' lines with permissions 'perms' whose path contains 'path' (NULL: any).
 */
void harness_go_and_wait_for_mappings(pid_t pid, const char *go_file, const char *perms,
				      const char *path, unsigned count);
/* Wait for (and if still running, kill) a spawned workload. */
void harness_reap(pid_t pid);

typedef struct HarnessRun {
	const char *backend;     /* "perf-dwarf" (NULL) or "perf-fp" */
	uint32_t hz;             /* 0: 999 */
	double seconds;          /* sampling window (with cpu_seconds: only a hang guard) */
	double cpu_seconds;      /* >0: the window ends once the target has used this much CPU */
	bool kernel;             /* kernel frames */
	uint32_t stack_bytes;    /* 0: session default (16 KiB) */
	StackResolverOptions resolver; /* mode and kernel are set from the fields above */
	/* called between creating the session and starting it (what the target does then) */
	void (*before_start)(pid_t pid, void *userdata);
	void *before_start_userdata;
} HarnessRun;

typedef struct HarnessResult {
	Profile *profile;
	uint64_t truncated, unwind_failures, dropped;
	char cache_state[8];
	StackResolverStats resolver_stats;
	json_t *quality; /* the stack-quality report */
	/* the target's CPU time during the window, as the kernel accounted it */
	TestCpuTime cpu;
	bool cpu_known; /* false when the target was gone before the window ended */
	uint64_t start_mono; /* CLOCK_MONOTONIC of the session's start, where sample times count from */
} HarnessResult;

/* Profile 'pid' as 'run' says. Fills 'ret' (free with harness_result_done). */
int harness_profile(pid_t pid, const HarnessRun *run, HarnessResult *ret);
void harness_result_done(HarnessResult *r);

/* Frame 'i' (0 = leaf) of a sample's stack; stacks are short enough to walk. */
size_t harness_stack_frames(const Profile *p, uint32_t leaf, const ProfileFrame **frames,
			    size_t max);
const char *harness_frame_name(const Profile *p, const ProfileFrame *f);
/* Does the sample's stack hold a frame named 'name'? */
bool harness_stack_has(const Profile *p, uint32_t leaf, const char *name);
/* The first user frame that is not inlined, the function perf reports as self. */
const char *harness_self_function(const Profile *p, uint32_t leaf);

/* Fail the test with a message. */
_Noreturn void harness_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define harness_assert(cond, ...)                    \
	do {                                         \
		if (!(cond))                         \
			harness_fail(__VA_ARGS__);   \
	} while (0)
