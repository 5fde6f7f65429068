/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Layout shared by profile.bpf.c (in-kernel) and its host-side users: the key
 * of the `counts` hash map and the sizes of both maps. The BPF side gets its
 * integer types from vmlinux.h, the host side from <linux/types.h>.
 */

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Frames a stack-trace map entry holds (the kernel's PERF_MAX_STACK_DEPTH). */
#define PROFILE_BPF_STACK_DEPTH 127

/*
 * Default map sizes; a loader may change them before load. The kernel walks user
 * stacks by frame pointer: in code built without them every sample yields the
 * leaf plus a garbage frame, hence a new stack, and about samples / (2 * stacks)
 * of them find their bucket taken (-EEXIST). Size the stack map to hz x seconds
 * x CPUs for such targets; the stack map preallocates ~1 KiB per entry.
 */
#define PROFILE_BPF_MAX_STACKS 16384
#define PROFILE_BPF_MAX_COUNTS 16384

/*
 * One aggregation bucket. A stack id is an index into `stackmap`, or a
 * negative errno from bpf_get_stackid(): -EFAULT when there is no such stack
 * (no kernel stack for a sample taken in user mode), -EEXIST on a hash
 * collision in a full bucket. 16 bytes, no padding, so keys hash stably.
 */
typedef struct ProfileBpfKey {
	__u32 tgid;
	__u32 tid;
	__s32 user_stack_id;
	__s32 kernel_stack_id;
} ProfileBpfKey;
