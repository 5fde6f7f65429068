/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The in-memory profile of one session: the contract between sampling and
 * unwinding (which fill it as samples arrive) and the exports (which read it).
 *
 * Everything is interned so a sample costs 16 bytes no matter how deep its
 * stack is: strings once in a table, frames once per distinct location, and
 * stacks as a prefix tree of (parent, frame) nodes, root first, as the
 * Firefox Profiler's stackTable does. A sample names its leaf node.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_NONE UINT32_MAX

/* Module name used for kernel frames, as perf spells it. */
#define PROFILE_KERNEL_MODULE "[kernel.kallsyms]"

typedef struct ProfileFrame {
	uint32_t function; /* string: demangled name, or "module+0xoffset" when unnamed */
	uint32_t module;   /* string: module path, or PROFILE_NONE when unmapped */
	uint32_t build_id; /* string: lower-case hex, or PROFILE_NONE */
	uint32_t file;     /* string: source file, or PROFILE_NONE */
	uint32_t line;     /* 0 when unknown */
	uint64_t address;  /* module-relative address; absolute when module is PROFILE_NONE */
	bool inlined;      /* an inline frame expanded from the location below it */
	bool kernel;
} ProfileFrame;

typedef struct ProfileStackNode {
	uint32_t parent; /* node nearer the root, or PROFILE_NONE for a root frame */
	uint32_t frame;
} ProfileStackNode;

typedef struct ProfileSample {
	uint64_t time_ns; /* since the session started */
	uint32_t tid;
	uint32_t stack; /* leaf node, or PROFILE_NONE for an empty stack */
} ProfileSample;

typedef struct ProfileThread {
	uint32_t tid;
	uint32_t name; /* string (comm), or PROFILE_NONE */
} ProfileThread;

typedef struct ProfileIndex ProfileIndex;

typedef struct Profile {
	char **strings;
	uint32_t n_strings;
	ProfileFrame *frames;
	uint32_t n_frames;
	ProfileStackNode *stacks;
	uint32_t n_stacks;
	ProfileSample *samples;
	size_t n_samples;
	ProfileThread *threads;
	uint32_t n_threads;

	uint32_t pid;
	uint64_t start_unix_nanos;
	uint64_t period_nanos;
	uint64_t duration_nanos;

	/* private: hash indexes behind the intern functions */
	ProfileIndex *string_index;
	ProfileIndex *frame_index;
	ProfileIndex *stack_index;
	size_t samples_allocated;
	uint32_t strings_allocated, frames_allocated, stacks_allocated, threads_allocated;
} Profile;

int profile_new(Profile **ret);
Profile *profile_free(Profile *p);
void profile_freep(Profile **p);
#define _cleanup_profile_ __attribute__((cleanup(profile_freep)))

const char *profile_string(const Profile *p, uint32_t id);

int profile_intern_string(Profile *p, const char *s, uint32_t *ret);
int profile_intern_string_len(Profile *p, const char *s, size_t len, uint32_t *ret);
/* Frames compare by every field; the same location always gets the same id. */
int profile_intern_frame(Profile *p, const ProfileFrame *frame, uint32_t *ret);
int profile_intern_stack(Profile *p, uint32_t parent, uint32_t frame, uint32_t *ret);
/* Intern a whole stack given leaf first (the order unwinders produce). */
int profile_intern_stack_leaf_first(Profile *p, const uint32_t *frames, size_t n, uint32_t *ret);
int profile_add_sample(Profile *p, uint32_t tid, uint64_t time_ns, uint32_t stack);
/* Record (or rename) a thread; threads with samples but no name are fine. */
int profile_set_thread(Profile *p, uint32_t tid, const char *name);
const ProfileThread *profile_find_thread(const Profile *p, uint32_t tid);
