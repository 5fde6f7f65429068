/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The end of a bpf session: every bucket of the program's `counts` map, its
 * stacks looked up in `stacks`, becomes one SAMPLE record carrying its count
 * (PerfSample.weight) and the address space it was counted in
 * (PerfSample.addr), with the kernel's frame-pointer walk as its callchain:
 * whoever consumes the session's records names it, as a perf-fp sample, here
 * or in the sandboxed unwinder. Nothing is named here; only the address
 * spaces profd keeps anyway (process-table.h, /proc/PID/maps) are read, to
 * count truncated walks. Processes the admit rule refused are counted, not
 * written.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "perf-record.h"
#include "process-table.h"
#include "tid-set.h"

struct profile_bpf;

typedef struct BpfBucketStats {
	uint64_t buckets;
	uint64_t samples_captured, samples_excluded;
	uint64_t lost_user_stacks; /* samples whose user stack the program could not store */
	uint64_t truncated_stacks; /* samples whose frame-pointer walk stopped early */
	TidSet threads_seen, processes_seen, processes_excluded;
} BpfBucketStats;

void bpf_bucket_stats_clear(BpfBucketStats *s);

typedef struct BpfBucketOutput {
	const PerfRecordFormat *format; /* of the SAMPLE and COMM records written */
	uint64_t time;                  /* of every record written: counts carry none */
	bool kernel;                    /* kernel stacks too */
	/* a record for the consumer */
	int (*emit)(void *userdata, const struct perf_event_header *rec);
	/* a process the table met only now (joined from /proc): its state for the consumer */
	int (*emit_process)(void *userdata, const TargetProcess *p);
	void *userdata;
} BpfBucketOutput;

/* Stats accumulate into 'stats'. */
int bpf_buckets_emit(struct profile_bpf *skel, ProcessTable *processes, const BpfBucketOutput *out,
		     BpfBucketStats *stats);
