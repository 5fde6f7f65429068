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

#include "cleanup.h"
#include "id-table.h"

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
	uint32_t pid;  /* its process; 0 when the profile is of one process (Profile.pid) */
} ProfileThread;

/*
 * Where a file was mapped in the target, for exports that carry mappings
 * (pprof): frames of module M at address A (module-relative: the ELF
 * address) ran at A + bias, inside [start, limit), which maps the file from
 * 'offset' on. One per (module, build-id); recorded by the resolver.
 */
typedef struct ProfileMapping {
	uint32_t module;   /* string: path, as frames' module */
	uint32_t build_id; /* string, or PROFILE_NONE */
	uint64_t start, limit, offset;
	uint64_t bias;
	bool main;         /* the target's executable */
} ProfileMapping;
/* A process of a multi-process profile (a cgroup, the whole machine). */
typedef struct ProfileProcess {
	uint32_t pid;
	uint32_t name;  /* string (the process's comm), or PROFILE_NONE */
	uint32_t label; /* string "comm-pid" ("[unknown]-pid" without a name): its frame in folded stacks */
} ProfileProcess;

/*
 * An interval on a thread's timeline (a live run's stage span): the Firefox
 * export shows each as an interval marker on its thread.
 */
typedef struct ProfileMarker {
	uint32_t tid;
	uint32_t name;             /* string */
	uint64_t start_ns, end_ns; /* since the session started, as sample times */
} ProfileMarker;

/* Label keys a profile may carry ("stage", "state"). */
#define PROFILE_LABEL_KEYS_MAX 4

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
	ProfileMapping *mappings;
	uint32_t n_mappings;
	ProfileProcess *processes; /* empty unless multi_process */
	uint32_t n_processes;

	/*
	 * Labels of each sample (a live run's stage and macro state): keys are
	 * strings, sample_labels holds n_samples rows of n_label_keys string ids
	 * (PROFILE_NONE: no value); NULL without label keys.
	 */
	uint32_t label_keys[PROFILE_LABEL_KEYS_MAX];
	uint32_t n_label_keys;
	uint32_t *sample_labels;
	ProfileMarker *markers;
	uint32_t n_markers;

	uint32_t pid;          /* the process profiled; 0 for a multi-process target */
	uint32_t target;       /* string "pid:N", "cgroup:PATH", "unit:NAME", "system", or PROFILE_NONE */
	uint32_t unit;         /* string: the systemd unit profiled, or PROFILE_NONE */
	bool multi_process;    /* samples come from many processes: exports name each one */
	bool untimed;          /* samples carry no times (time_ns 0): the bpf backend counts only */
	uint64_t start_unix_nanos;
	uint64_t period_nanos;
	uint64_t duration_nanos;

	/* private: hash indexes behind the intern functions (ids into the arrays above) */
	IdTable string_index;
	IdTable frame_index;
	IdTable stack_index;
	size_t samples_allocated;
	uint32_t strings_allocated, frames_allocated, stacks_allocated, threads_allocated;
	uint32_t mappings_allocated;
	uint32_t processes_allocated;
	uint32_t markers_allocated;
} Profile;

int profile_new(Profile **ret);
Profile *profile_free(Profile *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Profile *, profile_free);
#define _cleanup_profile_ __attribute__((cleanup(profile_freep)))

const char *profile_string(const Profile *p, uint32_t id);

int profile_intern_string(Profile *p, const char *s, uint32_t *ret);
int profile_intern_string_len(Profile *p, const char *s, size_t len, uint32_t *ret);
/* PROFILE_NONE for NULL. */
int profile_intern_string_or_none(Profile *p, const char *s, uint32_t *ret);
/* Frames compare by every field; the same location always gets the same id. */
int profile_intern_frame(Profile *p, const ProfileFrame *frame, uint32_t *ret);
int profile_intern_stack(Profile *p, uint32_t parent, uint32_t frame, uint32_t *ret);
/* Give frames 'ids' new contents (names learnt after the fact); their stacks keep them. */
int profile_replace_frames(Profile *p, const uint32_t *ids, const ProfileFrame *frames, size_t n);
/* Intern a whole stack given leaf first (the order unwinders produce). */
int profile_intern_stack_leaf_first(Profile *p, const uint32_t *frames, size_t n, uint32_t *ret);
int profile_add_sample(Profile *p, uint32_t tid, uint64_t time_ns, uint32_t stack);
/* Record (or rename) a thread; threads with samples but no name are fine. */
int profile_set_thread(Profile *p, uint32_t tid, const char *name);
/* Add thread 'tid', known to be new, named by string 'name' (or PROFILE_NONE); no search. */
int profile_append_thread(Profile *p, uint32_t tid, uint32_t name);
const ProfileThread *profile_find_thread(const Profile *p, uint32_t tid);
/* Record where a file is mapped; the first record of a (module, build_id) stays. */
int profile_add_mapping(Profile *p, const ProfileMapping *m);
const ProfileMapping *profile_find_mapping(const Profile *p, uint32_t module, uint32_t build_id);
/* Tie a thread to its process (recorded, with the process's name, when new or renamed). */
int profile_set_thread_process(Profile *p, uint32_t tid, uint32_t pid, const char *process_name);
const ProfileProcess *profile_find_process(const Profile *p, uint32_t pid);
/* Add process 'pid', known to be new, with strings 'name' (or PROFILE_NONE) and 'label'; no search. */
int profile_append_process(Profile *p, uint32_t pid, uint32_t name, uint32_t label);
/* Name what was profiled (either may be NULL). */
int profile_set_target(Profile *p, const char *target, const char *unit);
/* The process of a thread: its recorded one, else the profile's pid. */
uint32_t profile_thread_pid(const Profile *p, uint32_t tid);

/* ---- labels and markers (profile-labels.c) ---- */

/*
 * Give every sample the label keys 'keys' (n at most PROFILE_LABEL_KEYS_MAX),
 * all without a value; -EBUSY when the profile has label keys already.
 * Samples added later get no values either.
 */
int profile_set_label_keys(Profile *p, const char *const *keys, uint32_t n);
/* The key's index, or -ENOENT. */
int profile_find_label_key(const Profile *p, const char *key, uint32_t *ret);
/* The value (string id or PROFILE_NONE) of label 'key' of sample 'i'. */
static inline uint32_t profile_sample_label(const Profile *p, size_t i, uint32_t key)
{
	return p->sample_labels[i * p->n_label_keys + key];
}
static inline void profile_set_sample_label(Profile *p, size_t i, uint32_t key, uint32_t value)
{
	p->sample_labels[i * p->n_label_keys + key] = value;
}
int profile_add_marker(Profile *p, const ProfileMarker *m);
/*
 * Keep only the samples whose label 'key' is 'value' (and the markers named
 * 'value'); -ENOENT when the profile has no such label key.
 */
int profile_keep_labelled(Profile *p, const char *key, const char *value);
