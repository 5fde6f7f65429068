/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Records a session writes itself, in the kernel's layout: what perf reports
 * only as it changes (the mappings and thread names found at start, the name
 * of a thread created mid-session) becomes the same MMAP2 and COMM records
 * the rings carry. A consumer of a session's record stream then needs nothing
 * but the stream: no /proc of its own (perf record synthesizes these too).
 */

#include <linux/perf_event.h>
#include <stdint.h>

#include "perf-record.h"
#include "perf-sample.h"
#include "process-maps.h"

/* Header, the fixed MMAP2 fields, a path of up to PATH_MAX and the longest sample_id trailer. */
#define PERF_SYNTH_MAX_BYTES (sizeof(struct perf_event_header) + 64 + 4096 + 48)

typedef struct PerfSynthRecord {
	union {
		struct perf_event_header header;
		uint64_t words[PERF_SYNTH_MAX_BYTES / sizeof(uint64_t)]; /* records are 8-byte aligned */
	};
} PerfSynthRecord;

/* A MMAP2 record of 'mapping' in process 'pid' at CLOCK_MONOTONIC 'time'. -ENAMETOOLONG for a path over PATH_MAX. */
int perf_synth_mmap2(const PerfRecordFormat *format, uint32_t pid, const ProcessMapping *mapping,
		     uint64_t time, PerfSynthRecord *ret);
/* A COMM record naming thread 'tid' of 'pid' (at most 15 characters kept). */
int perf_synth_comm(const PerfRecordFormat *format, uint32_t pid, uint32_t tid, const char *comm,
		    uint64_t time, PerfSynthRecord *ret);
/*
 * A SAMPLE record of 's' (its IP, pid/tid, time, address, callchain and weight,
 * as 'format' selects them): an aggregated sample made in user space (the bpf
 * backend). -EOPNOTSUPP for a format with other fields, -E2BIG for a callchain
 * that does not fit.
 */
int perf_synth_sample(const PerfRecordFormat *format, const PerfSample *s, PerfSynthRecord *ret);
