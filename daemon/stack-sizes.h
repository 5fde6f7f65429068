/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Adaptive stack copy: how many bytes of user stack a session copies per
 * sample of a program, learned from what unwinding its earlier sessions
 * actually read (unwind_suggest_stack_bytes(): 99.9% of the walks with
 * headroom, twice as much when too many ran out of stack). Each 16 KiB
 * copy passes through the perf ring, the backlog and the unwinder, so a
 * program whose walks read 2 KiB is profiled far cheaper with a copy of
 * 2.5 KiB than with the default.
 *
 * Keyed by (caller uid, identity of the executable file): one caller's
 * sessions never change what another's copy. Kept in the state directory
 * (state/stack-sizes, rewritten when a learned size changes) so that the
 * first session after a restart copies what the last one needed. Bounded:
 * STACK_SIZES_MAX entries; when full, the least recently used goes, but a
 * uid holding a quarter of them replaces its own (one caller's many
 * programs do not push out everyone else's). Thread-safe.
 */

#include <stdint.h>
#include <sys/types.h>

#include "cleanup.h"
#include "symbol-cache.h"

#define STACK_SIZES_FILE "stack-sizes"
#define STACK_SIZES_MAX 1024U

typedef struct StackSizeKey {
	uint32_t uid;
	FileIdentity exe;
} StackSizeKey;

typedef struct StackSizes StackSizes;

/*
 * What state/stack-sizes under 'state_fd' (-1: kept in memory only) says;
 * a damaged file is set aside (as .corrupt) and the sizes start empty.
 */
int stack_sizes_new(int state_fd, StackSizes **ret);
StackSizes *stack_sizes_free(StackSizes *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(StackSizes *, stack_sizes_free);

/* The key of the program 'pid' runs now (its /proc/PID/exe) for sessions of 'uid'. */
int stack_size_key_of_pid(pid_t pid, uid_t uid, StackSizeKey *ret);

/* Bytes to copy for 'key': what was learned, at most 'ceiling'; 'ceiling' when nothing was. */
uint32_t stack_sizes_get(StackSizes *s, const StackSizeKey *key, uint32_t ceiling);

/*
 * Learn 'bytes' for 'key' from a session that copied 'copied' bytes a sample
 * (bytes 0: it learned nothing; ignored), kept within [UNWIND_STACK_MIN,
 * SAMPLING_MAX_STACK_BYTES]: a larger size is taken at once, a smaller one
 * only when below 3/4 of the known one (sizes that differ a little from
 * session to session do not rewrite the file each time). A session that
 * copied less than the known size (its caller set a lower stack_bytes) saw
 * too little to change it. Saved when it changed.
 */
int stack_sizes_put(StackSizes *s, const StackSizeKey *key, uint32_t copied, uint32_t bytes);
