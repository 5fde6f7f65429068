/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The consumer of a session's record stream: MMAP2 records keep the target's
 * address space current, COMM records its thread names (and an exec resets
 * the address space), and every SAMPLE is resolved into a stack of the
 * Profile. It needs nothing but the records (the session synthesizes the
 * state it found at start), so it runs wherever the stream goes: inline in a
 * SamplingSession, on a Collector's unwind thread, or in the sandboxed helper.
 */

#include <stdint.h>

#include "cleanup.h"
#include "perf-record.h"
#include "process-maps.h"
#include "process-table.h"
#include "profile.h"

typedef struct ProfileBuilder ProfileBuilder;

typedef struct ProfileBuilderStats {
	uint64_t samples;          /* samples added to the profile */
	uint64_t unwind_failures;  /* samples whose resolver failed or flagged unwind_failed */
	uint64_t truncated_stacks; /* samples whose stack was cut short */
} ProfileBuilderStats;

/*
 * Records of process 'pid' only; 'resolve' NULL = the default resolver
 * (default-resolver.h). With 'pid' 0 the records of many processes (a cgroup,
 * the whole machine): each keeps its own address spaces in a ProcessTable
 * (FORK, EXIT and exec followed), and the profile is multi-process.
 */
int profile_builder_new(uint32_t pid, uint64_t period_nanos, SampleResolveFn resolve,
			void *resolve_userdata, ProfileBuilder **ret);
ProfileBuilder *profile_builder_free(ProfileBuilder *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProfileBuilder *, profile_builder_free);

/*
 * Many processes: 'fn' is told of each process whose EXIT record the builder
 * took; its samples came before it. The resolver may let go of what it keeps
 * for it (process_resolvers_exited()): a machine that starts thousands of
 * processes a second would otherwise hold all of them until the end.
 */
typedef void (*ProcessExitFn)(void *userdata, uint32_t pid);
void profile_builder_set_exit_hook(ProfileBuilder *b, ProcessExitFn fn, void *userdata);

/* Where the window starts: sample times become offsets from 'start_mono'. */
void profile_builder_set_start(ProfileBuilder *b, uint64_t start_mono, uint64_t start_unix);
/* The window covered, once known. */
void profile_builder_set_duration(ProfileBuilder *b, uint64_t duration_nanos);

/*
 * Take one record. A sample the resolver fails on (for want of memory too) is
 * still added, with an empty stack; only the builder's own allocations
 * failing is an error.
 */
int profile_builder_add(ProfileBuilder *b, const PerfRecord *rec);

const Profile *profile_builder_get_profile(const ProfileBuilder *b);
Profile *profile_builder_steal_profile(ProfileBuilder *b);
const ProcessMaps *profile_builder_get_maps(const ProfileBuilder *b);
/* Many processes: their table (NULL for one), e.g. for a RecordedFiles opener. */
const ProcessTable *profile_builder_get_processes(const ProfileBuilder *b);
/* Name what the profile is of (profile_set_target()). */
int profile_builder_set_target(ProfileBuilder *b, const char *target, const char *unit);
void profile_builder_get_stats(const ProfileBuilder *b, ProfileBuilderStats *ret);
