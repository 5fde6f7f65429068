/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The SampleResolveFn of a target with many processes (a cgroup, the whole
 * machine): one StackResolver per process — its perf map and frame cache —
 * all sharing one SymbolCache and, in frame-pointer mode, one module per
 * mapped file (shared-modules.h): a binary is loaded and named once however
 * many processes run it, so the cost follows distinct binaries, not
 * processes. DWARF unwinding keeps an address space per process; the files
 * they map are opened once, by identity, and handed to each (a process gone
 * before its samples are named cannot hand its own over).
 *
 *     ProcessResolvers *rs;
 *     process_resolvers_new(&(StackResolverOptions){ .mode = ..., .cache = cache }, &rs);
 *     options.resolve = process_resolvers_resolve; options.resolve_userdata = rs;
 */

#include <stdint.h>

#include "cleanup.h"
#include "perf-sample.h"
#include "process-maps.h"
#include "profile.h"
#include "stack-resolver.h"

typedef struct ProcessResolvers ProcessResolvers;

/* 'options' as for stack_resolver_new(); ns_pid must be 0 (each process has its own). */
int process_resolvers_new(const StackResolverOptions *options, ProcessResolvers **ret);
ProcessResolvers *process_resolvers_free(ProcessResolvers *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProcessResolvers *, process_resolvers_free);

/* SampleResolveFn; 'userdata' is the ProcessResolvers, 'maps' the address space of sample->pid. */
int process_resolvers_resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			      Profile *profile, SampleStack *ret);

/*
 * The pid process 'pid' knows itself by (its perf map's name), when the caller
 * knows better than target_namespace_pid() (a sandbox without /proc asks profd).
 */
typedef uint32_t (*ProcessNamespacePidFn)(void *userdata, uint32_t pid);
void process_resolvers_set_namespace_pid(ProcessResolvers *r, ProcessNamespacePidFn fn,
					 void *userdata);

/*
 * Drop the resolver of a process whose samples are all resolved (it exited);
 * its stack-quality counts stay in the session's.
 */
void process_resolvers_forget(ProcessResolvers *r, uint32_t pid);
/* The same as a ProcessExitFn (profile-builder.h); 'userdata' is the ProcessResolvers. */
void process_resolvers_exited(void *userdata, uint32_t pid);

/*
 * At the end of the session: stack_resolver_finish() for every process (late
 * JIT names), and the session's stack-quality report merged over all of them,
 * forgotten ones included. Once; later calls return what the first did.
 */
int process_resolvers_finish(ProcessResolvers *r);

/* The merged stack-quality counts, after process_resolvers_finish(); NULL when it failed. */
const StackQuality *process_resolvers_get_quality(const ProcessResolvers *r);

/* Processes that have a resolver now. */
size_t process_resolvers_count(const ProcessResolvers *r);
