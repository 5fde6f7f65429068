/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a sampling session cost and covered (DESIGN.md §3, names from the
 * seed), and its `metrics` export as JSON.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct SamplingMetrics {
	/* the seed's ProfileMetrics */
	uint64_t samples_captured;  /* samples kept in the profile */
	uint64_t samples_dropped;   /* lost by the kernel (LOST records) or while throttled */
	uint64_t threads_seen;      /* distinct tids with at least one kept sample */
	uint64_t threads_at_start;  /* tids in /proc/<pid>/task when sampling started */
	uint64_t pause_nanos;       /* estimate, see pause_nanos_method */
	uint64_t duration_nanos;    /* window actually sampled */
	uint32_t hz;                /* effective frequency */
	bool clamped;               /* hz or duration was reduced to fit the bounds */
	bool buffer_full;           /* ring_capacity was reached; the window ended there */

	/* what was asked for and how it ran */
	uint32_t requested_hz;
	uint64_t requested_duration_nanos;
	uint64_t effective_duration_nanos; /* requested duration after clamping */
	uint64_t period_nanos;
	uint64_t start_unix_nanos;
	const char *backend;        /* "perf-dwarf", "perf-fp" */
	const char *event;          /* "cpu-clock", "task-clock", "cycles" */
	const char *end_reason;     /* "running", "duration", "stopped", "target-exited", "buffer-full" */
	uint32_t stack_bytes;       /* user stack bytes copied per sample (0 in perf-fp) */
	uint64_t ring_capacity;     /* sample budget of the session */
	uint64_t ring_bytes;        /* bytes of records read from the rings */

	/* collector side */
	uint64_t collector_cpu_nanos; /* CLOCK_THREAD_CPUTIME_ID spent in the session's calls */
	uint64_t unwind_failures;     /* samples whose resolver failed or flagged unwind_failed */
	uint64_t truncated_stacks;    /* samples whose SampleStack was truncated */
	uint64_t lost_records;        /* PERF_RECORD_LOST records */
	uint64_t lost_samples;        /* samples those records reported lost */
	uint64_t throttle_events;     /* PERF_RECORD_THROTTLE records */
	uint64_t unthrottle_events;   /* PERF_RECORD_UNTHROTTLE records */
	uint64_t throttled_samples;   /* estimated samples missed while throttled */
	uint64_t pause_nanos_per_sample; /* the per-sample cost the estimate uses */
	const char *pause_nanos_method;  /* how pause_nanos was obtained, for readers */
} SamplingMetrics;

/* The seed's derived figures. */
double sampling_metrics_thread_coverage(const SamplingMetrics *m);
double sampling_metrics_overhead_ratio(const SamplingMetrics *m);
double sampling_metrics_fidelity(const SamplingMetrics *m);

/* The `metrics` export: one JSON object with every field above plus the derived ones. */
int sampling_metrics_to_json(const SamplingMetrics *m, json_t **ret);
/* Same, serialised (indented, trailing newline); free() the result. */
int sampling_metrics_format_json(const SamplingMetrics *m, char **ret);
