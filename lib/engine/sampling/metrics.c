/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

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

/* jansson integers are signed 64-bit; counters never get near 2^63, but never wrap silently */
static json_t *json_u64(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *json_string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

int sampling_metrics_to_json(const SamplingMetrics *m, json_t **ret)
{
	_cleanup_(json_decrefp) json_t *o = NULL;

	o = json_pack_ex(NULL, JSON_STRICT,
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:b, s:b,"
		" s:f, s:f, s:f,"
		" s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o,"
		" s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"samples_captured", json_u64(m->samples_captured),
		"samples_dropped", json_u64(m->samples_dropped),
		"threads_seen", json_u64(m->threads_seen),
		"threads_at_start", json_u64(m->threads_at_start),
		"pause_nanos", json_u64(m->pause_nanos),
		"duration_nanos", json_u64(m->duration_nanos),
		"hz", (json_int_t)m->hz,
		"clamped", m->clamped,
		"buffer_full", m->buffer_full,
		"thread_coverage", sampling_metrics_thread_coverage(m),
		"overhead_ratio", sampling_metrics_overhead_ratio(m),
		"fidelity", sampling_metrics_fidelity(m),
		"requested_hz", (json_int_t)m->requested_hz,
		"requested_duration_nanos", json_u64(m->requested_duration_nanos),
		"effective_duration_nanos", json_u64(m->effective_duration_nanos),
		"period_nanos", json_u64(m->period_nanos),
		"start_unix_nanos", json_u64(m->start_unix_nanos),
		"backend", json_string_or_null(m->backend),
		"event", json_string_or_null(m->event),
		"end_reason", json_string_or_null(m->end_reason),
		"stack_bytes", (json_int_t)m->stack_bytes,
		"ring_capacity", json_u64(m->ring_capacity),
		"ring_bytes", json_u64(m->ring_bytes),
		"collector_cpu_nanos", json_u64(m->collector_cpu_nanos),
		"unwind_failures", json_u64(m->unwind_failures),
		"truncated_stacks", json_u64(m->truncated_stacks),
		"lost_records", json_u64(m->lost_records),
		"lost_samples", json_u64(m->lost_samples),
		"throttle_events", json_u64(m->throttle_events),
		"unthrottle_events", json_u64(m->unthrottle_events),
		"throttled_samples", json_u64(m->throttled_samples),
		"pause_nanos_per_sample", json_u64(m->pause_nanos_per_sample),
		"pause_nanos_method", json_string_or_null(m->pause_nanos_method));
	if (!o)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

int sampling_metrics_format_json(const SamplingMetrics *m, char **ret)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	char *s;
	int r;

	r = sampling_metrics_to_json(m, &o);
	if (r < 0)
		return r;
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	if (!s)
		return -ENOMEM;
	/* json_dumps leaves out the final newline files want */
	size_t len = strlen(s);
	char *t = realloc(s, len + 2);
	if (!t) {
		free(s);
		return -ENOMEM;
	}
	t[len] = '\n';
	t[len + 1] = '\0';
	*ret = t;
	return 0;
}
