/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Layout shared by profile.bpf.c (in-kernel) and its host-side users: the key
 * of the `counts` hash map, the filter modes and the default map sizes. The
 * BPF side gets its integer types from vmlinux.h, the host side from
 * <linux/types.h>.
 */

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Frames a stack-trace map entry holds (the kernel's PERF_MAX_STACK_DEPTH). */
#define PROFILE_BPF_STACK_DEPTH 127

/*
 * Default map sizes; a loader may change them before load. Every distinct
 * stack takes one entry of `stacks` (~1 KiB, preallocated). The kernel walks
 * user stacks by frame pointer: in code built without them nearly every sample
 * yields the leaf plus a garbage frame, hence a new stack, so size `stacks` to
 * the samples a session may take.
 */
#define PROFILE_BPF_MAX_STACKS 16384
#define PROFILE_BPF_MAX_COUNTS 16384
/* Processes that may exec during a session (entries leave when a process dies). */
#define PROFILE_BPF_MAX_EXECS 16384
/* Entries of the `tgids` set. */
#define PROFILE_BPF_MAX_TGIDS 1024

/* Which samples count (the `filter` constant, set before load). */
enum {
	PROFILE_BPF_FILTER_TGIDS = 0,  /* processes whose tgid is in `tgids` */
	PROFILE_BPF_FILTER_CGROUP = 1, /* tasks in the cgroup `cgroups[0]` or below it */
	PROFILE_BPF_FILTER_ALL = 2,    /* every process but the idle task and those in `tgids` */
};

/* ProfileBpfKey.lost: a stack the sample had but `stacks` could not store (full). */
#define PROFILE_BPF_LOST_USER 1U
#define PROFILE_BPF_LOST_KERNEL 2U

/*
 * One aggregation bucket. A stack is named by a 64-bit hash of its addresses,
 * the key of its entry in `stacks` (0: the sample has no such stack — no user
 * stack in a kernel thread, no kernel stack for a sample taken in user mode or
 * when kernel stacks are not collected; see `lost`). Hashing in the program
 * rather than using a stack-trace map avoids that map's direct-mapped buckets,
 * where a new stack whose bucket is taken is simply lost. exec_gen counts
 * the execs the process made since the program was loaded, so samples of each
 * address space stay apart. 32 bytes, no padding, so keys hash stably.
 */
typedef struct ProfileBpfKey {
	__u32 tgid;
	__u32 tid;
	__u32 exec_gen;
	__u32 lost; /* PROFILE_BPF_LOST_* */
	__u64 user_stack;
	__u64 kernel_stack;
} ProfileBpfKey;

/* An entry of `stacks`: return addresses leaf first, zero after the last one. */
typedef struct ProfileBpfStack {
	__u64 ips[PROFILE_BPF_STACK_DEPTH];
} ProfileBpfStack;
