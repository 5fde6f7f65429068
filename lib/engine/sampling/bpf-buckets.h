/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The end of a bpf session: every bucket of the program's `counts` map, its
 * stacks looked up in `stacks`, named through a SampleResolveFn against the
 * address space of the bucket's process (process-table.h) and added to a
 * Profile as that many samples without times. Processes the admit rule
 * refused are counted, not added.
 */

#include <stdbool.h>
#include <stdint.h>

#include "perf-sample.h"
#include "process-table.h"
#include "profile.h"
#include "tid-set.h"

struct profile_bpf;

typedef struct BpfBucketStats {
	uint64_t buckets;
	uint64_t samples_captured, samples_excluded;
	uint64_t unwind_failures;  /* samples whose user stack was lost or failed to resolve */
	uint64_t truncated_stacks; /* samples whose frame-pointer walk stopped early */
	TidSet threads_seen, processes_seen, processes_excluded;
} BpfBucketStats;

void bpf_bucket_stats_clear(BpfBucketStats *s);

/* 'kernel': name kernel stacks too. Stats accumulate into 'stats'. */
int bpf_buckets_resolve(struct profile_bpf *skel, ProcessTable *processes, bool kernel,
			SampleResolveFn resolve, void *resolve_userdata, Profile *profile,
			BpfBucketStats *stats);
