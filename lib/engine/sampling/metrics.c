/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metrics.h"

#include <errno.h>
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

/* jansson integers are signed 64-bit; every u64 is kept exact (a saturated request is 2^64-1) */
static json_t *json_u64(uint64_t v)
{
	return json_u64_new(v);
}

static json_t *json_string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* Targets beyond one pid and the bpf backend: present when they apply. */
static int add_target_fields(json_t *o, const SamplingMetrics *m)
{
	bool bpf = m->backend && strcmp(m->backend, "bpf") == 0;
	const struct {
		const char *name;
		uint64_t value;
		bool shown;
	} counters[] = {
		{ "processes_seen", m->processes_seen, m->processes_seen > 0 },
		{ "processes_excluded", m->processes_excluded, m->processes_seen > 0 },
		{ "samples_excluded", m->samples_excluded, m->processes_seen > 0 },
		{ "processes_unrecorded", m->processes_unrecorded, m->processes_unrecorded > 0 },
		{ "samples_unrecorded", m->samples_unrecorded, m->processes_unrecorded > 0 },
		{ "unwinder_restarts", m->unwinder_restarts, m->unwinder_restarts > 0 },
		{ "samples_lost_unwinder", m->samples_lost_unwinder, m->unwinder_restarts > 0 },
		{ "side_band_lost", m->side_band_lost, m->processes_seen > 0 || bpf },
		{ "lost_stacks", m->lost_stacks, bpf },
		{ "map_full_samples", m->map_full_samples, bpf },
		{ "exec_errors", m->exec_errors, bpf },
		{ "aggregated_buckets", m->aggregated_buckets, bpf },
		{ "bpf_program_runs", m->bpf_program_runs, bpf },
		{ "bpf_program_nanos", m->bpf_program_nanos, bpf },
		{ "bpf_setup_cpu_nanos", m->bpf_setup_cpu_nanos, bpf },
		{ "bpf_naming_cpu_nanos", m->bpf_naming_cpu_nanos, bpf },
	};
	int r = 0;

	if (m->target)
		r |= json_object_set_new(o, "target", json_string(m->target));
	if (m->backend_reason)
		r |= json_object_set_new(o, "backend_reason", json_string(m->backend_reason));
	r |= json_object_set_new(o, "timeline", json_boolean(!m->untimed));
	for (size_t i = 0; i < ELEMENTSOF(counters); i++)
		if (counters[i].shown)
			r |= json_object_set_new(o, counters[i].name, json_u64(counters[i].value));
	return r ? -ENOMEM : 0;
}

int sampling_metrics_to_json(const SamplingMetrics *m, json_t **ret)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	int r;

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
	/* the collector's backlog (json_pack takes only so many arguments) */
	if (json_object_set_new(o, "backlog_dropped", json_u64(m->backlog_dropped)) < 0 ||
	    json_object_set_new(o, "records_dropped", json_u64(m->records_dropped)) < 0 ||
	    json_object_set_new(o, "backlog_bytes", json_u64(m->backlog_bytes)) < 0 ||
	    json_object_set_new(o, "backlog_peak_bytes", json_u64(m->backlog_peak_bytes)) < 0 ||
	    json_object_set_new(o, "samples_after_cutoff", json_u64(m->samples_after_cutoff)) < 0 ||
	    json_object_set_new(o, "consumer_throttled_nanos",
				json_u64(m->consumer_throttled_nanos)) < 0 ||
	    json_object_set_new(o, "threads_peak", json_u64(m->threads_peak)) < 0 ||
	    json_object_set_new(o, "requested_stack_bytes", json_integer(m->requested_stack_bytes)) < 0 ||
	    json_object_set_new(o, "stack_bytes_needed", json_integer(m->stack_bytes_needed)) < 0)
		return -ENOMEM;
	r = add_target_fields(o, m);
	if (r < 0)
		return r;
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
