/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text report (docs/record-format.md, "Text report"), byte for byte as
 * the reference records in tests/fixtures/ have it. Decimals round the exact
 * binary value half to even, as glibc's %.3f does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cleanup.h"
#include "record.h"

static double ms(uint64_t ns)
{
	return (double) ns / 1000000.0;
}

/* Rust's max_by_key: the last of the equal maxima. */
static const StateMeasurement *bottleneck_state(const RunProfile *p)
{
	const StateMeasurement *best = NULL;

	for (size_t i = 0; i < p->n_states; i++)
		if (!best || p->states[i].elapsed_ns >= best->elapsed_ns)
			best = &p->states[i];
	return best;
}

/* The dearest stage other than backend-dispatch, which wraps the others. */
static const StageMeasurement *bottleneck_stage(const RunProfile *p)
{
	const StageMeasurement *best = NULL;

	for (size_t i = 0; i < p->n_stages; i++)
		if (p->stages[i].stage != STAGE_BACKEND_DISPATCH &&
		    (!best || p->stages[i].elapsed_ns >= best->elapsed_ns))
			best = &p->stages[i];
	return best;
}

static void render(FILE *f, const RunProfile *p)
{
	const RunIdentity *id = &p->identity;
	const StateMeasurement *state;
	const StageMeasurement *stage;
	char reader_threads[24] = "auto";
	double throughput_mib_s = 0.0;

	if (id->reader_threads.set)
		snprintf(reader_threads, sizeof(reader_threads), "%" PRIu64, id->reader_threads.value);
	if (p->wall_time_ns != 0)
		throughput_mib_s = (double) p->input_bytes * 1000000000.0 / (double) p->wall_time_ns /
				   (1024.0 * 1024.0);

	fprintf(f, "KeyHog profile %s\n", id->run_id);
	fprintf(f,
		"state=%s source=%s workload=%s backend_requested=%s backend_selected=%s cache=%s "
		"daemon=%s wall_ms=%.3f\n",
		run_state_to_string(p->status), id->source_kind, id->workload_class,
		id->backend_requested, id->backend_selected ?: "unselected",
		cache_state_to_string(id->cache_state), daemon_state_to_string(id->daemon_state),
		ms(p->wall_time_ns));
	fprintf(f, "version=%s detector_digest=%s config_digest=%s\n", id->binary_version,
		id->detector_digest, id->config_digest);
	fprintf(f,
		"input_bytes=%" PRIu64 " input_units=%" PRIu64 " throughput_mib_s=%.3f "
		"scanner_threads=%" PRIu64 " reader_threads=%s logical_cpus=%" PRIu64 "\n",
		p->input_bytes, p->input_units, throughput_mib_s, id->scanner_threads,
		reader_threads, id->logical_cpus);

	for (size_t i = 0; i < p->n_states; i++) {
		const StateMeasurement *s = &p->states[i];

		fprintf(f, "macro %-12s wall_ms=%.3f", run_state_to_string(s->state),
			ms(s->elapsed_ns));
		if (s->aggregate_cpu_milli_percent.set)
			fprintf(f, " cpu=%.1f%%",
				(double) s->aggregate_cpu_milli_percent.value / 1000.0);
		else
			fputs(" cpu=unavailable", f);
		if (s->resident_start_bytes.set && s->resident_end_bytes.set)
			fprintf(f, " rss_bytes=%" PRIu64 "->%" PRIu64, s->resident_start_bytes.value,
				s->resident_end_bytes.value);
		if (s->threads_start.set && s->threads_end.set)
			fprintf(f, " threads=%" PRIu64 "->%" PRIu64, s->threads_start.value,
				s->threads_end.value);
		fputc('\n', f);
	}

	for (size_t i = 0; i < p->n_stages; i++) {
		const StageMeasurement *s = &p->stages[i];
		double per_call_us = s->calls == 0 ? 0.0
						   : (double) s->elapsed_ns / (double) s->calls / 1000.0;

		fprintf(f, "  %-24s %10.3f ms calls=%" PRIu64 " per_call_us=%.3f attributed_ms=%.3f\n",
			stage_to_string(s->stage), ms(s->elapsed_ns), s->calls, per_call_us,
			ms(s->attributed_ns));
	}

	state = bottleneck_state(p);
	if (state)
		fprintf(f, "bottleneck macro=%s wall_ms=%.3f", run_state_to_string(state->state),
			ms(state->elapsed_ns));
	stage = bottleneck_stage(p);
	if (stage)
		fprintf(f, " summed_stage=%s summed_ms=%.3f", stage_to_string(stage->stage),
			ms(stage->elapsed_ns));
	if (p->n_states > 0 || p->n_stages > 0)
		fputc('\n', f);

	if (p->resources.aggregate_cpu_percent.set)
		fprintf(f, "resources aggregate_cpu=%.1f%%", p->resources.aggregate_cpu_percent.value);
	else
		fputs("resources aggregate_cpu=unavailable", f);
	if (p->resources.max_observed_resident_bytes.set)
		fprintf(f, " max_observed_rss_bytes=%" PRIu64,
			p->resources.max_observed_resident_bytes.value);
	if (p->resources.max_observed_threads.set)
		fprintf(f, " max_observed_threads=%" PRIu64, p->resources.max_observed_threads.value);
	fputc('\n', f);
}

int record_render_text(const RunProfile *p, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	FILE *f;

	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	render(f, p);
	if (ferror(f) | fclose(f))
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	return 0;
}
