/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a sampling session cost and covered, and its `metrics` export as JSON
 * (README "Formats and viewers"; the names are the `metrics` format's).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct SamplingMetrics {
	/* what was sampled */
	uint64_t samples_captured;  /* samples kept in the profile */
	uint64_t samples_dropped;   /* lost by the kernel (LOST records), while throttled, or at the
				       backlog's cap (backlog_dropped) */
	uint64_t threads_seen;      /* distinct tids with at least one kept sample */
	uint64_t threads_at_start;  /* tids in /proc/<pid>/task when sampling started */
	uint64_t threads_peak;      /* most threads the target ran at once during the window */
	uint64_t pause_nanos;       /* estimate, see pause_nanos_method */
	uint64_t duration_nanos;    /* window actually sampled */
	uint32_t hz;                /* effective frequency */
	bool clamped;               /* hz or duration (the request, or its default) was reduced to fit
				       the bounds */
	bool buffer_full;           /* sample_budget was reached; the window ended there */

	/* what was asked for (as given: 0 = the default) and how it ran */
	uint32_t requested_hz;
	uint64_t requested_duration_nanos;
	uint64_t effective_duration_nanos; /* requested duration after clamping */
	uint64_t period_nanos;
	uint64_t start_unix_nanos;
	uint64_t start_mono_nanos;  /* CLOCK_MONOTONIC of the window's start: sample time 0 (not in JSON) */
	const char *backend;        /* "perf-dwarf", "perf-fp" */
	const char *event;          /* "cpu-clock", "task-clock", "cycles" */
	const char *end_reason;     /* "running", "duration", "stopped", "target-exited", "buffer-full",
				       "failed", "credentials-changed" */
	uint32_t requested_stack_bytes; /* the caller's stack_bytes, the most a sample copies
					   (0 = the default) */
	uint32_t stack_bytes;       /* user stack bytes copied per sample (0 in perf-fp): less than
				       requested when earlier sessions of the program needed less */
	uint32_t stack_bytes_needed; /* what unwinding this session's samples needed, with headroom
					(doubled when too many ran out): the next copy; 0 unknown */
	uint64_t sample_budget;     /* most samples the session keeps (JSON: ring_capacity) */
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
	uint64_t backlog_dropped;     /* samples drained but not kept: the unwind backlog was full */
	uint64_t records_dropped;     /* mappings/names not kept for the same reason (rare) */
	uint64_t backlog_bytes;       /* the backlog's cap (0 when samples are resolved inline) */
	uint64_t backlog_peak_bytes;  /* the most it held at once */
	uint64_t samples_after_cutoff; /* drained after the target's last good access check, not kept */
	uint64_t consumer_throttled_nanos; /* the unwinder elsewhere unanswered: it asked profd for
					      more than its share of profd's time */
	uint64_t pause_nanos_per_sample; /* the per-sample cost the estimate uses */
	const char *pause_nanos_method;  /* how pause_nanos was obtained, for readers */

	/* the target and the choice of backend (NULL when not set) */
	const char *target;          /* "pid:N", "cgroup:PATH", "system" */
	const char *backend_reason;  /* why `auto` chose this backend, or that it was asked for */
	bool untimed;                /* samples carry no times (bpf: counts only, no timeline) */
	/* multi-process targets */
	uint64_t processes_seen;     /* distinct processes with at least one kept sample */
	uint64_t processes_excluded; /* processes left out by the access rules */
	/*
	 * Processes past the cap on those whose mappings are kept for when they
	 * are gone (files of a user's cgroup, unwound elsewhere), and their
	 * samples: named only while the process runs.
	 */
	uint64_t processes_unrecorded, samples_unrecorded;
	/*
	 * The unwinder elsewhere died mid-session and another one went on from
	 * the backlog: how often, and the samples the dead ones took with them
	 * (known once the session is done)
	 */
	uint64_t unwinder_restarts, samples_lost_unwinder;
	uint64_t samples_excluded;   /* their samples, counted and thrown away */
	uint64_t side_band_lost;     /* MMAP2/COMM/FORK/EXIT records the kernel could not write */
	/* bpf */
	uint64_t lost_stacks;        /* stacks not stored (map full): their samples lack them */
	uint64_t map_full_samples;   /* samples lost because the counts map was full (in dropped) */
	uint64_t exec_errors;        /* execs not numbered: their samples may be named wrongly */
	uint64_t aggregated_buckets; /* distinct (thread, stacks) buckets read at the end */
	uint64_t bpf_program_runs;   /* program runs, when kernel.bpf_stats_enabled is on */
	uint64_t bpf_program_nanos;  /* ... and their CPU time (charged to the sampled tasks) */
	uint64_t bpf_setup_cpu_nanos;  /* of collector_cpu_nanos: loading, attaching, reading /proc */
	/* ... and naming the buckets' samples: the consumer's CPU (a Collector's unwind thread or
	 * the sandboxed unwinder; the sampler alone: its writing and naming them at the end) */
	uint64_t bpf_naming_cpu_nanos;
} SamplingMetrics;

/*
 * Derived figures: thread_coverage = threads_seen / threads_at_start (at most 1),
 * overhead_ratio = pause_nanos / duration_nanos, fidelity = captured / (captured +
 * dropped), 1 when nothing was offered.
 */
double sampling_metrics_thread_coverage(const SamplingMetrics *m);
double sampling_metrics_overhead_ratio(const SamplingMetrics *m);
double sampling_metrics_fidelity(const SamplingMetrics *m);

/* The `metrics` export: one JSON object with every field above plus the derived ones. */
int sampling_metrics_to_json(const SamplingMetrics *m, json_t **ret);
/* Same, serialised (indented, trailing newline); free() the result. */
int sampling_metrics_format_json(const SamplingMetrics *m, char **ret);
/* Same, with the members of the object 'extra' (NULL: none) after the metrics' own. */
int sampling_metrics_format_json_with(const SamplingMetrics *m, const json_t *extra, char **ret);
