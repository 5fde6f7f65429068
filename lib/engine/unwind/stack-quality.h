/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The stack-quality report of a session: for each module, how many samples'
 * stacks end early there or carry frames nothing names there, why, and what
 * would fix it — no CFI (unwind tables, or frame pointers), no symbols or
 * no debug info (the build-id, the -dbgsym package, debuginfod), the stack
 * copy too small (the --stack-bytes that would have held the stacks), JIT
 * code without a map (the runtime's flag that writes one). It goes into the
 * session's metrics and run record as JSON, and `profctl record` prints a
 * few lines of it when stacks are poor.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cleanup.h"
#include "hybrid-unwind.h"
#include "profile.h"

/* The module of code no file holds (JIT code, or where a broken walk led). */
#define STACK_QUALITY_ANONYMOUS "[anonymous code]"

typedef enum StackQualityNaming {
	STACK_QUALITY_NAMING_UNKNOWN, /* not looked at */
	STACK_QUALITY_NAMING_NONE,    /* neither symbols nor debug info */
	STACK_QUALITY_NAMING_SYMBOLS, /* a symbol table, no debug info */
	STACK_QUALITY_NAMING_DWARF,   /* debug info (its own or a separate file's) */
	_STACK_QUALITY_NAMING_MAX,
} StackQualityNaming;

typedef struct StackQuality StackQuality;

int stack_quality_new(StackQuality **ret);
StackQuality *stack_quality_free(StackQuality *q);
DEFINE_TRIVIAL_CLEANUP_FUNC(StackQuality *, stack_quality_free);

/* The target's executable: its name picks the hint for JIT code without a map. */
int stack_quality_set_executable(StackQuality *q, const char *path);

/* The index of a module (by path and build-id), created on first use. */
int stack_quality_module(StackQuality *q, const char *path, const char *build_id,
			 uint32_t *ret_index);
uint32_t stack_quality_n_modules(const StackQuality *q);
const char *stack_quality_module_path(const StackQuality *q, uint32_t module);
void stack_quality_set_naming(StackQuality *q, uint32_t module, StackQualityNaming naming);

/*
 * A walk that ended early in 'module' for 'end'; 'continued' when the
 * frame-pointer callchain carried it on ('complete': to its end);
 * 'stack_needed' the bytes the stack copy would have had to hold (for
 * UNWIND_END_STACK_COPY), else 0.
 */
void stack_quality_add_end(StackQuality *q, uint32_t module, UnwindEnd end, bool continued,
			   bool complete, uint64_t stack_needed);

/*
 * Add the counts of 'from' (one process of many) to 'into': a module by path
 * and build-id, its counts summed. ret_map[i] is the index in 'into' of
 * module i of 'from' (stack_quality_n_modules(from) of them). Unnamed frames
 * are counted after, once over the profile all the processes share.
 */
int stack_quality_merge(StackQuality *into, const StackQuality *from, uint32_t *ret_map);

/*
 * Count, over every sample of 'p', the stacks with frames nothing names:
 * frame_module[i] is 1 + the module index of profile frame i when it is
 * unnamed, 0 when it is named (frames beyond 'n' are named). Once, at the end.
 */
int stack_quality_count_unnamed(StackQuality *q, const Profile *p, const uint32_t *frame_module,
				uint32_t n);

/*
 * Where debug info by build-id could come from, for the hint of a module
 * without it: what the process that words the report knows of its fetch.
 */
typedef enum StackQualityFetch {
	STACK_QUALITY_FETCH_UNSET,    /* DEBUGINFOD_URLS unset: nothing asks a server */
	STACK_QUALITY_FETCH_NOT_HERE, /* it is set, but this process fetches nothing */
	STACK_QUALITY_FETCH_NOT_ASKED, /* a fetch exists; this build-id was not asked for */
	STACK_QUALITY_FETCH_PENDING,  /* queued or being fetched */
	STACK_QUALITY_FETCH_FAILED,   /* the servers had none, or the fetch failed */
	STACK_QUALITY_FETCH_FETCHED,  /* in the cache now: later sessions have it */
	_STACK_QUALITY_FETCH_MAX,
} StackQualityFetch;

/* The state of the fetch of 'build_id' (lower-case hex). */
typedef StackQualityFetch (*StackQualityFetchFn)(void *userdata, const char *build_id);

/*
 * {"samples", "ended_early", "continued_by_frame_pointers", "with_unnamed_frames",
 *  "unnamed_leaf", "poor", "modules": [{"module", "build_id", "samples_ended_here",
 *  "samples_unnamed_here", "reasons": [{"reason", "samples", "hint", ...}, ...]}, ...]}
 * "stack-copy" reasons carry "stack_bytes" (the copy to ask for) and "stack_bytes_known"
 * (the stacks seen say it holds them); "no-symbols" and "no-debug-info" carry "debuginfod"
 * (StackQualityFetch as "unset", "not-here", "not-asked", "pending", "failed", "fetched";
 * null without a build-id). 'fetch' NULL: this process fetches nothing (UNSET or NOT_HERE
 * by DEBUGINFOD_URLS).
 */
int stack_quality_to_json(const StackQuality *q, StackQualityFetchFn fetch, void *userdata,
			  json_t **ret);

/*
 * The counts alone (no hints), as the unwinder hands them to profd, which
 * words the report itself: compact JSON of at most STACK_QUALITY_WIRE_MAX
 * bytes (-EFBIG beyond), the worst modules only.
 */
#define STACK_QUALITY_WIRE_MAX (128U << 10)
int stack_quality_to_wire(const StackQuality *q, char **ret, size_t *ret_size);
/*
 * Parse what an unwinder sent, as hostile input: strictly the shape
 * stack_quality_to_wire() makes, no count above 'max_samples' (the samples
 * it was given), no control characters in names, a bounded number of
 * modules. -EBADMSG for anything else.
 */
int stack_quality_from_wire(const char *data, size_t size, uint64_t max_samples,
			    StackQuality **ret);

/*
 * Print a report (of stack_quality_to_json(), as it may have come over the
 * bus) for a person when its stacks are poor: returns 1 when it printed, 0
 * when the stacks are fine, -EINVAL for something that is no report.
 */
int stack_quality_print(const json_t *report, FILE *out);
