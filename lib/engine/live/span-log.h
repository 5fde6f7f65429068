/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What profd learns from a live run's span ring (lib/record/span-ring.h): the
 * program's stage intervals per thread and its macro-state transitions, in
 * profd's clock and thread ids, checked.
 *
 * SpanRingReader creates the ring (a sealed memfd: the program can neither
 * shrink nor grow it, so reading it never faults) and maps it read-only. The
 * program owns what is in it, so everything read there is hostile: profd keeps
 * its own copy of the geometry and its own cursors, copies each record before
 * looking at it, and keeps only records that make sense (a known stage, begin
 * <= end, not in the future). A bad writer can only spoil its own run; what
 * went wrong is counted (SpanLogStats).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "record.h"
#include "span-ring.h"

typedef struct SpanInterval {
	uint64_t begin_ns, end_ns; /* CLOCK_MONOTONIC, profd's */
	uint32_t tid;              /* in profd's pid namespace */
	uint32_t stage;            /* Stage */
} SpanInterval;

typedef struct SpanTransition {
	uint64_t time_ns; /* CLOCK_MONOTONIC, profd's */
	RunState state;
} SpanTransition;

typedef struct SpanLogStats {
	uint64_t spans;               /* kept */
	uint64_t spans_lost;          /* overwritten in the ring before profd read them */
	uint64_t spans_invalid;       /* refused: unknown stage, end before begin, in the future */
	uint64_t spans_over_limit;    /* beyond the run's limit, not kept */
	uint64_t ring_errors;         /* impossible values: a head that went back, an unknown thread */
	uint32_t threads;             /* slots that named their thread */
	uint32_t threads_without_slot; /* threads the program says found no slot (its word) */
	uint32_t transitions;         /* kept */
	uint32_t transitions_invalid; /* unknown state, out of order, in the future */
} SpanLogStats;

typedef struct SpanLog {
	SpanInterval *intervals; /* in the order read */
	size_t n_intervals, allocated;
	SpanTransition transitions[SPAN_RING_TRANSITIONS];
	size_t n_transitions;
	SpanLogStats stats;
} SpanLog;

SpanLog *span_log_free(SpanLog *log);
DEFINE_TRIVIAL_CLEANUP_FUNC(SpanLog *, span_log_free);

/* The program's thread id -> profd's: 0 when it is not a thread of the program, SPAN_TID_LATER when that cannot be told yet (asked again at a later drain). */
typedef uint32_t (*SpanTidMapFn)(void *userdata, uint32_t tid);
#define SPAN_TID_LATER UINT32_MAX

typedef struct SpanRingReaderOptions {
	SpanRingGeometry geometry;
	uint64_t max_spans;      /* intervals kept at most; more are counted as over the limit */
	/*
	 * Records one drain copies at most (0: no limit), so a program writing
	 * as fast as it can does not hold profd's loop; the next drain goes on
	 * with the slots this one did not reach.
	 */
	uint32_t drain_records;
	int64_t clock_offset_ns; /* added to the program's times (its time namespace's offset) */
	SpanTidMapFn map_tid;    /* NULL: the program's thread ids are profd's */
	void *userdata;
} SpanRingReaderOptions;

typedef struct SpanRingReader SpanRingReader;

/*
 * A new ring: *ret_memfd is the memfd to hand to the program (the caller's to
 * close), already initialised and sealed.
 */
int span_ring_reader_new(const SpanRingReaderOptions *o, int *ret_memfd, SpanRingReader **ret);
SpanRingReader *span_ring_reader_free(SpanRingReader *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(SpanRingReader *, span_ring_reader_free);
#define _cleanup_span_ring_reader_ __attribute__((cleanup(span_ring_reader_freep)))

/* Read what the program wrote since the last drain; 'now_ns' is CLOCK_MONOTONIC now. */
int span_ring_reader_drain(SpanRingReader *r, uint64_t now_ns);
/* The same without the drain_records limit: the last drain, once the program is done (at most the ring). */
int span_ring_reader_drain_all(SpanRingReader *r, uint64_t now_ns);
const SpanLogStats *span_ring_reader_stats(const SpanRingReader *r);
/* The log read so far, handed over (the reader keeps reading into a fresh one). */
int span_ring_reader_take_log(SpanRingReader *r, SpanLog **ret);
