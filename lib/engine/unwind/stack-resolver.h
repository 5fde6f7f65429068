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

#include <stdbool.h>
#include <stdint.h>

#include "perf-sample.h"
#include "process-maps.h"
#include "profile.h"
#include "symbol-cache.h"

#define STACK_RESOLVER_DEFAULT_MAX_DEPTH 128U

typedef enum StackUnwindMode {
	STACK_UNWIND_DWARF, /* libdw CFI unwinding of the copied user stack */
	STACK_UNWIND_FP,    /* the kernel's frame-pointer callchain */
} StackUnwindMode;

typedef struct StackResolverOptions {
	StackUnwindMode mode;
	bool kernel;                /* keep kernel frames */
	uint32_t max_depth;         /* user frames (and kernel frames) at most; 0 = 128 */
	SymbolCache *cache;         /* borrowed, may be shared; NULL = a private one */
	const char *debuginfo_path; /* libdwfl syntax; NULL = "-:.debug:/usr/lib/debug" */
	const char *perf_map_path;  /* JIT symbols; NULL = the target's /tmp/perf-<pid>.map */
} StackResolverOptions;

typedef struct StackResolver StackResolver;

int stack_resolver_new(const StackResolverOptions *options, StackResolver **ret);
StackResolver *stack_resolver_free(StackResolver *r);
void stack_resolver_freep(StackResolver **r);

/*
 * SampleResolveFn; 'userdata' is the StackResolver. A resolver serves one
 * target process and one Profile (it caches that profile's frame ids).
 */
int stack_resolver_resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			   Profile *profile, SampleStack *ret);

/* "warm" when the target's executable had been resolved by an earlier session, else "cold". */
const char *stack_resolver_cache_state(const StackResolver *r);

/* The mode a backend name implies: DWARF for "perf-dwarf" (and NULL/"auto"), FP for "perf-fp"
 * and "bpf" (kernel-walked stacks); else -EINVAL. */
int stack_unwind_mode_from_backend(const char *backend, StackUnwindMode *ret);
