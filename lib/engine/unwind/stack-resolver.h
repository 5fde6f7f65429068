/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The engine's SampleResolveFn: turns each sample into a named stack of the
 * session's Profile as it arrives (DESIGN.md §4). User frames come from DWARF
 * unwinding of the sample's stack copy (perf-dwarf) or from the kernel's
 * frame-pointer callchain (perf-fp); kernel frames from the callchain, named
 * from /proc/kallsyms. Names are cached per (build-id, address) in a
 * SymbolCache that may outlive the resolver (cache_state warm/cold).
 *
 * Plugging it into a sampling session:
 *     StackResolverOptions o = { .mode = STACK_UNWIND_DWARF, .kernel = true, .cache = cache };
 *     stack_resolver_new(&o, &resolver);
 *     options.resolve = stack_resolver_resolve; options.resolve_userdata = resolver;
 * and free the resolver after the session.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "address-space.h"
#include "cleanup.h"
#include "perf-sample.h"
#include "process-maps.h"
#include "profile.h"
#include "stack-quality.h"
#include "symbol-cache.h"
#include "target-files.h"

#define STACK_RESOLVER_DEFAULT_MAX_DEPTH 128U

typedef enum StackUnwindMode {
	STACK_UNWIND_DWARF, /* libdw CFI unwinding of the copied user stack */
	STACK_UNWIND_FP,    /* the kernel's frame-pointer callchain */
} StackUnwindMode;

/*
 * Where a resolver finds the module holding a code address, and the address
 * as that module knows it: by default the resolver's own address space (one
 * libdwfl session per process); the processes of a multi-process target share
 * one module per file instead (shared-modules.h), so naming costs once per
 * binary, not once per process. Frame-pointer mode only (DWARF unwinding
 * needs the process's own address space).
 */
typedef struct ModuleFinder {
	Dwfl_Module *(*find)(void *userdata, const ProcessMaps *maps, uint64_t addr,
			     ModuleInfo **ret_info, uint64_t *ret_addr);
	void *userdata;
} ModuleFinder;

typedef struct StackResolverOptions {
	StackUnwindMode mode;
	bool kernel;                /* keep kernel frames */
	uint32_t max_depth;         /* user frames (and kernel frames) at most; 0 = 128 */
	SymbolCache *cache;         /* borrowed, may be shared; NULL = a private one */
	uint32_t owner;             /* the caller's uid: whose files' names may be shared */
	/* every file of the target is opened through it (borrowed, outlives the resolver);
	 * NULL = target_file_opener_default, which opens in this process */
	const TargetFileOpener *files;
	uint32_t ns_pid;            /* the target's pid in its own namespace (perf map name);
				     * 0 = the same as its pid */
	const ModuleFinder *modules; /* borrowed; NULL = the resolver's own address space */
} StackResolverOptions;

typedef struct StackResolver StackResolver;

int stack_resolver_new(const StackResolverOptions *options, StackResolver **ret);
StackResolver *stack_resolver_free(StackResolver *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(StackResolver *, stack_resolver_free);

/*
 * SampleResolveFn; 'userdata' is the StackResolver. A resolver serves one
 * target process and one Profile (it caches that profile's frame ids).
 */
int stack_resolver_resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			   Profile *profile, SampleStack *ret);

/*
 * At the end of the session: name what could not be named while sampling —
 * JIT code whose records the JIT had not yet written out (V8 buffers its
 * jitdump file), from what the files hold now — and complete the
 * stack-quality report. Once; later calls do nothing.
 */
int stack_resolver_finish(StackResolver *r);

/*
 * stack_resolver_finish() for a resolver that shares its Profile with the
 * resolvers of other processes (process-resolvers.h): everything but the
 * counting of unnamed frames, which whoever merges the reports does once
 * over the shared profile (stack_quality_merge()).
 */
int stack_resolver_finish_naming(StackResolver *r);

/*
 * Per frame id of 'p': 1 + the index of its module in the resolver's
 * stack-quality counts when nothing names it, else 0; *ret_n entries
 * (frames beyond are named; none when 'p' is not the resolver's profile).
 */
const uint32_t *stack_resolver_get_unnamed_frames(const StackResolver *r, const Profile *p,
						  uint32_t *ret_n);

/* The stack-quality counts (stack-quality.h), complete after stack_resolver_finish(). */
const StackQuality *stack_resolver_get_quality(const StackResolver *r);

/* How DWARF walks ended (hybrid-unwind.h), and how many the frame-pointer callchain continued. */
typedef struct StackResolverStats {
	uint64_t ends[6];        /* per UnwindEnd */
	uint64_t hybrid;         /* walks continued with the callchain */
	uint64_t hybrid_complete; /* ... to the callchain's own end */
} StackResolverStats;
void stack_resolver_get_stats(const StackResolver *r, StackResolverStats *ret);

/* "warm" when the target's executable had been resolved by an earlier session, else "cold". */
const char *stack_resolver_cache_state(const StackResolver *r);

/*
 * Adaptive stack copy: the bytes of user stack worth copying per sample in
 * the next session of this program, from what this resolver's walks read of
 * the 'copied' bytes its samples had (unwind_suggest_stack_bytes()); 0 when
 * nothing was walked (frame-pointer mode, no samples).
 */
uint32_t stack_resolver_stack_bytes_needed(const StackResolver *r, uint32_t copied,
					   uint32_t ceiling);

/* The mode a backend name implies: DWARF for "perf-dwarf" (and NULL/"auto"), FP for "perf-fp"
 * and "bpf" (kernel-walked stacks); else -EINVAL. */
int stack_unwind_mode_from_backend(const char *backend, StackUnwindMode *ret);
