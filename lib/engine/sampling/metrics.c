/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metrics.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "json-number.h"

double sampling_metrics_thread_coverage(const SamplingMetrics *m)
{
	double c;

	if (m->threads_at_start == 0)
		return 0.0;
	c = (double)m->threads_seen / (double)m->threads_at_start;
	return c < 1.0 ? c : 1.0;
}

double sampling_metrics_overhead_ratio(const SamplingMetrics *m)
{
	if (m->duration_nanos == 0)
		return 0.0;
	return (double)m->pause_nanos / (double)m->duration_nanos;
}

double sampling_metrics_fidelity(const SamplingMetrics *m)
{
	uint64_t offered = m->samples_captured + m->samples_dropped;

	if (offered == 0)
		return 1.0;
	return (double)m->samples_captured / (double)offered;
}

/*
 * The `metrics` export, one row a member in the order written. A member is
 * written always, or only where it applies (targets beyond one pid, the bpf
 * backend, a restarted unwinder).
 */
typedef enum MetricType {
	METRIC_U64,          /* exact, above INT64_MAX too (a saturated request is 2^64-1) */
	METRIC_U32,
	METRIC_BOOL,
	METRIC_NOT_BOOL,     /* the field negated: "timeline" is !untimed */
	METRIC_STRING,       /* null when NULL */
	METRIC_STRING_IF_SET, /* left out when NULL */
	METRIC_DERIVED,      /* a ratio computed from other fields */
} MetricType;

typedef enum MetricShown {
	SHOWN_ALWAYS,
	SHOWN_PROCESSES,     /* a target of several processes: processes_seen > 0 */
	SHOWN_UNRECORDED,    /* processes_unrecorded > 0 */
	SHOWN_RESTARTS,      /* unwinder_restarts > 0 */
	SHOWN_SIDE_BAND,     /* several processes, or the bpf backend */
	SHOWN_BPF,
} MetricShown;

typedef struct MetricField {
	const char *name;
	MetricType type;
	MetricShown shown;
	size_t offset;       /* in SamplingMetrics; unused for METRIC_DERIVED */
	double (*derived)(const SamplingMetrics *m);
} MetricField;

#define FIELD(type, shown, name) { #name, type, shown, offsetof(SamplingMetrics, name), NULL }
#define U64(name) FIELD(METRIC_U64, SHOWN_ALWAYS, name)
#define U32(name) FIELD(METRIC_U32, SHOWN_ALWAYS, name)
#define BOOL(name) FIELD(METRIC_BOOL, SHOWN_ALWAYS, name)
#define STRING(name) FIELD(METRIC_STRING, SHOWN_ALWAYS, name)
#define DERIVED(name) { #name, METRIC_DERIVED, SHOWN_ALWAYS, 0, sampling_metrics_##name }
#define U64_WHEN(shown, name) FIELD(METRIC_U64, shown, name)

static const MetricField metric_fields[] = {
	U64(samples_captured),
	U64(samples_dropped),
	U64(threads_seen),
	U64(threads_at_start),
	U64(pause_nanos),
	U64(duration_nanos),
	U32(hz),
	BOOL(clamped),
	BOOL(buffer_full),
	DERIVED(thread_coverage),
	DERIVED(overhead_ratio),
	DERIVED(fidelity),
	U32(requested_hz),
	U64(requested_duration_nanos),
	U64(effective_duration_nanos),
	U64(period_nanos),
	U64(start_unix_nanos),
	STRING(backend),
	STRING(event),
	STRING(end_reason),
	U32(stack_bytes),
	/* the sample budget keeps its wire name */
	{ "ring_capacity", METRIC_U64, SHOWN_ALWAYS, offsetof(SamplingMetrics, sample_budget), NULL },
	U64(ring_bytes),
	U64(collector_cpu_nanos),
	U64(unwind_failures),
	U64(truncated_stacks),
	U64(lost_records),
	U64(lost_samples),
	U64(throttle_events),
	U64(unthrottle_events),
	U64(throttled_samples),
	U64(pause_nanos_per_sample),
	STRING(pause_nanos_method),
	/* the collector's backlog */
	U64(backlog_dropped),
	U64(records_dropped),
	U64(backlog_bytes),
	U64(backlog_peak_bytes),
	U64(samples_after_cutoff),
	U64(consumer_throttled_nanos),
	U64(threads_peak),
	U32(requested_stack_bytes),
	U32(stack_bytes_needed),
	/* the target and the backend */
	FIELD(METRIC_STRING_IF_SET, SHOWN_ALWAYS, target),
	FIELD(METRIC_STRING_IF_SET, SHOWN_ALWAYS, backend_reason),
	{ "timeline", METRIC_NOT_BOOL, SHOWN_ALWAYS, offsetof(SamplingMetrics, untimed), NULL },
	U64_WHEN(SHOWN_PROCESSES, processes_seen),
	U64_WHEN(SHOWN_PROCESSES, processes_excluded),
	U64_WHEN(SHOWN_PROCESSES, samples_excluded),
	U64_WHEN(SHOWN_UNRECORDED, processes_unrecorded),
	U64_WHEN(SHOWN_UNRECORDED, samples_unrecorded),
	U64_WHEN(SHOWN_RESTARTS, unwinder_restarts),
	U64_WHEN(SHOWN_RESTARTS, samples_lost_unwinder),
	U64_WHEN(SHOWN_SIDE_BAND, side_band_lost),
	U64_WHEN(SHOWN_BPF, lost_stacks),
	U64_WHEN(SHOWN_BPF, map_full_samples),
	U64_WHEN(SHOWN_BPF, exec_errors),
	U64_WHEN(SHOWN_BPF, aggregated_buckets),
	U64_WHEN(SHOWN_BPF, bpf_program_runs),
	U64_WHEN(SHOWN_BPF, bpf_program_nanos),
	U64_WHEN(SHOWN_BPF, bpf_setup_cpu_nanos),
	U64_WHEN(SHOWN_BPF, bpf_naming_cpu_nanos),
};

static bool metric_shown(const SamplingMetrics *m, MetricShown shown)
{
	bool bpf = m->backend && strcmp(m->backend, "bpf") == 0;

	switch (shown) {
	case SHOWN_ALWAYS:
		return true;
	case SHOWN_PROCESSES:
		return m->processes_seen > 0;
	case SHOWN_UNRECORDED:
		return m->processes_unrecorded > 0;
	case SHOWN_RESTARTS:
		return m->unwinder_restarts > 0;
	case SHOWN_SIDE_BAND:
		return m->processes_seen > 0 || bpf;
	case SHOWN_BPF:
		return bpf;
	}
	return false;
}

/* The member's value in *ret, NULL where it is left out. */
static int metric_value(const SamplingMetrics *m, const MetricField *f, json_t **ret)
{
	const void *at = (const uint8_t *)m + f->offset;
	const char *s;
	json_t *v = NULL;

	switch (f->type) {
	case METRIC_U64:
		v = json_u64_new(*(const uint64_t *)at);
		break;
	case METRIC_U32:
		v = json_integer(*(const uint32_t *)at);
		break;
	case METRIC_BOOL:
		v = json_boolean(*(const bool *)at);
		break;
	case METRIC_NOT_BOOL:
		v = json_boolean(!*(const bool *)at);
		break;
	case METRIC_STRING:
		s = *(const char *const *)at;
		v = s ? json_string(s) : json_null();
		break;
	case METRIC_STRING_IF_SET:
		s = *(const char *const *)at;
		if (!s) {
			*ret = NULL;
			return 0;
		}
		v = json_string(s);
		break;
	case METRIC_DERIVED:
		v = json_real(f->derived(m));
		break;
	}
	if (!v)
		return -ENOMEM;
	*ret = v;
	return 0;
}

int sampling_metrics_to_json(const SamplingMetrics *m, json_t **ret)
{
	_cleanup_(json_decrefp) json_t *o = json_object();

	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < ELEMENTSOF(metric_fields); i++) {
		const MetricField *f = &metric_fields[i];
		json_t *v;
		int r;

		if (!metric_shown(m, f->shown))
			continue;
		r = metric_value(m, f, &v);
		if (r < 0)
			return r;
		if (v && json_object_set_new(o, f->name, v) < 0)
			return -ENOMEM;
	}
	*ret = TAKE_PTR(o);
	return 0;
}

int sampling_metrics_format_json(const SamplingMetrics *m, char **ret)
{
	return sampling_metrics_format_json_with(m, NULL, ret);
}

int sampling_metrics_format_json_with(const SamplingMetrics *m, const json_t *extra, char **ret)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	_cleanup_free_ char *s = NULL;
	const char *key;
	json_t *value;
	int r;

	r = sampling_metrics_to_json(m, &o);
	if (r < 0)
		return r;
	json_object_foreach((json_t *)extra, key, value)
		if (json_object_set(o, key, value) < 0)
			return -ENOMEM;
	/* json_write() writes u64 values above INT64_MAX exactly, and shortest floats */
	r = json_write(o, true, &s);
	if (r < 0)
		return r;
	/* with the final newline files want */
	if (asprintf(ret, "%s\n", s) < 0)
		return -ENOMEM;
	return 0;
}
