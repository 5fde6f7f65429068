/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A real span session: spans on several threads, attribution, input totals
 * and transitions, checked in the counters and in the record; session versus
 * global counters; a second start refused; an abandoned session leaves
 * nothing behind; disabled spans record nothing; programmer errors (NULL arguments, a
 * state out of range) are refused with -EINVAL.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "record.h"
#include "record-test.h"
#include "span.h"

#define SPIN_NS 2000000 /* 2 ms of work per measured span */

static void spin(uint64_t ns)
{
	uint64_t end = span_now_ns() + ns;

	while (span_now_ns() < end)
		;
}

static RunIdentity identity(void)
{
	RunIdentity id;

	if (run_identity_new("1.0.0", "digest-a", "digest-b", "git", "test", "auto", &id) < 0)
		abort();
	return id;
}

static const StageMeasurement *find_stage(const RunProfile *p, Stage stage)
{
	for (size_t i = 0; i < p->n_stages; i++)
		if (p->stages[i].stage == stage)
			return &p->stages[i];
	return NULL;
}

typedef struct Worker {
	Stage stage;
	unsigned spans;
	bool decoded;
} Worker;

static void *worker(void *arg)
{
	const Worker *w = arg;

	if (w->decoded)
		span_set_attribution(ATTRIBUTION_DECODED);
	for (unsigned i = 0; i < w->spans; i++) {
		SPAN_SCOPE(w->stage);
		spin(SPIN_NS);
	}
	span_add_input_bytes(1000);
	span_add_input_units(1);
	return NULL;
}

#define HAMMER_SPANS 100000

/* Many short spans on one stage from several threads at once: no update may be lost. */
static void *hammer(void *arg)
{
	for (unsigned i = 0; i < HAMMER_SPANS; i++) {
		Span s = span_begin(STAGE_PREPROCESS);
		span_end(&s);
	}
	return arg;
}

static void test_disabled(void)
{
	StageMeasurement stages[_STAGE_MAX];
	uint64_t bytes, units;
	Span s;

	span_reset();
	CHECK(!span_enabled(), "spans enabled before any session");
	s = span_begin(STAGE_DECODE);
	CHECK(!s.recording && s.started_ns == 0, "a disabled span read the clock");
	span_end(&s);
	span_add_input_bytes(5);
	CHECK(span_take_stage_measurements(stages) == 0, "a disabled span was counted");
	span_take_input_totals(&bytes, &units);
	CHECK(bytes == 0 && units == 0, "disabled input counted: %" PRIu64, bytes);
}

static void test_session(void)
{
	_cleanup_(span_session_freep) SpanSession *session = NULL, *second = NULL;
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	StageMeasurement global[_STAGE_MAX];
	Worker workers[] = {
		{ .stage = STAGE_SCANNER_QUEUE_WAIT, .spans = 3 },
		{ .stage = STAGE_SOURCE_READ, .spans = 4 },
		{ .stage = STAGE_DECODE, .spans = 2, .decoded = true },
	};
	pthread_t hammers[2];
	pthread_t threads[ELEMENTSOF(workers)];
	RunIdentity id = identity(), id2 = identity();
	const StageMeasurement *st;
	size_t n_global;
	Span early;
	int r;

	/* a span begun before the session counts globally only */
	span_set_enabled(true);
	early = span_begin(STAGE_ENTROPY);
	CHECK(early.recording && !early.session_recording, "early span state wrong");

	r = span_session_start(&id, &session);
	CHECK(r == 0, "session start failed: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(!id.run_id, "identity not taken over by the session");
	CHECK(span_enabled(), "session did not enable spans");

	r = span_session_start(&id2, &second);
	CHECK(r == -EBUSY && !second, "second session start: expected -EBUSY, got %d", r);
	CHECK(id2.run_id, "refused start took the identity");
	run_identity_done(&id2);

	span_end(&early);
	CHECK(span_session_transition(session, RUN_STATE_ACQUIRING) == 0, "transition failed");
	for (size_t i = 0; i < ELEMENTSOF(workers); i++)
		pthread_create(&threads[i], NULL, worker, &workers[i]);
	for (size_t i = 0; i < ELEMENTSOF(hammers); i++)
		pthread_create(&hammers[i], NULL, hammer, NULL);
	for (size_t i = 0; i < ELEMENTSOF(workers); i++)
		pthread_join(threads[i], NULL);
	for (size_t i = 0; i < ELEMENTSOF(hammers); i++)
		pthread_join(hammers[i], NULL);
	CHECK(span_session_transition(session, RUN_STATE_SCANNING) == 0, "transition failed");
	{
		SPAN_SCOPE(STAGE_REPORTING);
		spin(SPIN_NS);
	}
	CHECK(span_session_transition(session, RUN_STATE_REPORTING) == 0, "transition failed");

	/* global counters saw everything, the early span included; taking them leaves the session's */
	n_global = span_take_stage_measurements(global);
	CHECK(n_global == 6, "global stages: expected 6, got %zu", n_global);
	for (size_t i = 1; i < n_global; i++)
		CHECK(global[i - 1].stage < global[i].stage, "global stages not in wire order");
	CHECK(n_global > 0 && global[0].stage == STAGE_SOURCE_READ && global[0].calls == 4,
	      "global source-read wrong");

	span_session_identity(session)->scanner_threads = ELEMENTSOF(workers);
	r = span_session_finish(session, RUN_STATE_COMPLETED, &p);
	CHECK(r == 0, "finish failed: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(!span_enabled(), "finish left spans enabled");
	CHECK(span_session_transition(session, RUN_STATE_FAILED) == -ESTALE,
	      "transition after finish accepted");

	/* stages: only non-zero, wire order, not the early span */
	CHECK(p->n_stages == 5, "record stages: expected 5, got %zu", p->n_stages);
	for (size_t i = 1; i < p->n_stages; i++)
		CHECK(p->stages[i - 1].stage < p->stages[i].stage, "record stages not in wire order");
	CHECK(!find_stage(p, STAGE_ENTROPY), "span begun before the session is in the record");
	for (size_t i = 0; i < ELEMENTSOF(workers); i++) {
		st = find_stage(p, workers[i].stage);
		CHECK(st && st->calls == workers[i].spans, "stage %s: calls wrong",
		      stage_to_string(workers[i].stage));
		if (!st)
			continue;
		CHECK(st->elapsed_ns >= workers[i].spans * (uint64_t) SPIN_NS,
		      "stage %s: elapsed %" PRIu64 " below the work done",
		      stage_to_string(st->stage), st->elapsed_ns);
		CHECK(st->attributed_ns == (workers[i].decoded ? st->elapsed_ns : 0),
		      "stage %s: attributed %" PRIu64 " of %" PRIu64, stage_to_string(st->stage),
		      st->attributed_ns, st->elapsed_ns);
	}
	st = find_stage(p, STAGE_PREPROCESS);
	CHECK(st && st->calls == ELEMENTSOF(hammers) * HAMMER_SPANS,
	      "concurrent spans lost: %" PRIu64 " calls of %zu", st ? st->calls : 0,
	      ELEMENTSOF(hammers) * HAMMER_SPANS);
	st = find_stage(p, STAGE_REPORTING);
	CHECK(st && st->calls == 1 && st->attributed_ns == 0, "reporting stage wrong");
	CHECK(p->input_bytes == 3000 && p->input_units == 3, "input totals %" PRIu64 "/%" PRIu64,
	      p->input_bytes, p->input_units);

	/* transitions, samples and states */
	{
		static const RunState expected[] = { RUN_STATE_CREATED, RUN_STATE_ACQUIRING,
						     RUN_STATE_SCANNING, RUN_STATE_REPORTING,
						     RUN_STATE_COMPLETED };

		CHECK(p->n_transitions == ELEMENTSOF(expected) &&
			      p->n_resource_samples == ELEMENTSOF(expected) && p->n_states == 4,
		      "transitions %zu samples %zu states %zu", p->n_transitions,
		      p->n_resource_samples, p->n_states);
		for (size_t i = 0; i < p->n_transitions && i < ELEMENTSOF(expected); i++) {
			CHECK(p->transitions[i].state == expected[i], "transition %zu is %s", i,
			      run_state_to_string(p->transitions[i].state));
			CHECK(i == 0 || p->transitions[i].elapsed_ns >= p->transitions[i - 1].elapsed_ns,
			      "transition times go backwards");
			CHECK(p->resource_samples[i].snapshot.thread_count.set &&
				      p->resource_samples[i].snapshot.resident_bytes.set,
			      "self snapshot %zu incomplete", i);
		}
		CHECK(p->transitions[0].elapsed_ns == 0, "created not at 0");
		CHECK(p->wall_time_ns >= p->transitions[p->n_transitions - 1].elapsed_ns,
		      "wall time below the last transition");
		CHECK(p->states[1].elapsed_ns >= 4 * (uint64_t) SPIN_NS, /* the longest worker */
		      "acquiring state shorter than its work");
		CHECK(p->resources.max_observed_threads.set, "max threads missing");
		CHECK(p->resources.aggregate_cpu_percent.set, "aggregate cpu missing");
	}

	/* session finish reset the global counters too */
	CHECK(span_take_stage_measurements(global) == 0, "global counters left after finish");

	/* the record serialises, renders and round-trips */
	{
		_cleanup_(run_profile_freep) RunProfile *again = NULL;
		_cleanup_free_ char *json = NULL, *text = NULL;

		CHECK(record_serialise(p, false, &json) == 0, "serialise failed");
		CHECK(json && record_parse(json, strlen(json), &again, NULL) == 0 &&
			      run_profile_equal(p, again),
		      "session record does not round-trip");
		CHECK(record_render_text(p, &text) == 0 && strstr(text, "  decode "),
		      "render lacks the decode stage");
	}
}

static void test_abandon(void)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	StageMeasurement global[_STAGE_MAX];
	SpanSession *session = NULL;
	RunIdentity id = identity();
	uint64_t bytes, units;
	int r;

	r = span_session_start(&id, &session);
	CHECK(r == 0, "start after a finished session failed: %s", strerror(-r));
	if (r < 0)
		return;
	{
		SPAN_SCOPE(STAGE_ENTROPY);
		span_add_input_bytes(7);
	}
	span_set_attribution(ATTRIBUTION_DECODED);
	session = span_session_free(session);

	CHECK(!span_enabled(), "abandoned session left spans enabled");
	CHECK(span_take_stage_measurements(global) == 0, "abandoned session left global counters");
	span_take_input_totals(&bytes, &units);
	CHECK(bytes == 0, "abandoned session left input totals");

	/* the slot is free again, and the session counters start from zero */
	id = identity();
	r = span_session_start(&id, &session);
	CHECK(r == 0, "start after abandon failed: %s", strerror(-r));
	if (r < 0)
		return;
	r = span_session_finish(session, RUN_STATE_FAILED, &p);
	CHECK(r == 0 && p->n_stages == 0 && p->input_bytes == 0,
	      "abandoned session's spans leaked into the next record");
	CHECK(r == 0 && p->status == RUN_STATE_FAILED && p->n_transitions == 2,
	      "empty session record wrong");
	span_session_free(session);
	span_set_attribution(ATTRIBUTION_ROOT);
}

static void test_identity(void)
{
	RunIdentity a = identity(), b = identity();
	unsigned long long pid, ns_a, ns_b;
	unsigned long long seq_a, seq_b;

	CHECK(sscanf(a.run_id, "%llu-%llu-%llu", &pid, &ns_a, &seq_a) == 3 &&
		      pid == (unsigned long long) getpid(),
	      "run_id '%s' is not pid-unixns-seq", a.run_id);
	CHECK(sscanf(b.run_id, "%*u-%llu-%llu", &ns_b, &seq_b) == 2 && seq_b == seq_a + 1 &&
		      ns_b >= ns_a,
	      "run ids '%s' then '%s' not sequential", a.run_id, b.run_id);
	CHECK(a.logical_cpus >= 1 && a.cache_state == CACHE_STATE_UNKNOWN &&
		      a.daemon_state == DAEMON_STATE_OFF && !a.backend_selected &&
		      !a.reader_threads.set && a.scanner_threads == 0,
	      "identity defaults differ from record.h's run_identity_new()");
	run_identity_done(&a);
	run_identity_done(&b);
}

/* Programmer errors at the entry points are refused with -EINVAL, nothing started or changed. */
static void test_programmer_errors(void)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	SpanSession *session = NULL;
	RunIdentity id = identity();
	char *json = NULL;
	int r;

	CHECK(span_session_start(NULL, &session) == -EINVAL && !session,
	      "start without an identity not refused");
	CHECK(span_session_start(&id, NULL) == -EINVAL, "start without a result not refused");
	CHECK(record_serialise(NULL, false, &json) == -EINVAL && !json,
	      "serialising no record not refused");
	CHECK(record_parse(NULL, 0, &p, NULL) == -EINVAL && !p, "parsing no text not refused");
	CHECK(span_session_transition(NULL, RUN_STATE_SCANNING) == -EINVAL,
	      "transition of no session not refused");

	/* the slot was not taken by the refused starts */
	r = span_session_start(&id, &session);
	CHECK(r == 0, "start after refused starts failed: %s", strerror(-r));
	if (r < 0) {
		run_identity_done(&id);
		return;
	}
	CHECK(span_session_transition(session, _RUN_STATE_MAX) == -EINVAL,
	      "transition to a state out of range not refused");
	CHECK(span_session_finish(session, RUN_STATE_COMPLETED, NULL) == -EINVAL,
	      "finish without a result not refused");
	r = span_session_finish(session, RUN_STATE_COMPLETED, &p);
	CHECK(r == 0 && p->n_transitions == 2, "finish after refused calls: %d, %zu transitions", r,
	      r == 0 ? p->n_transitions : 0);
	span_session_free(session);
}

int main(void)
{
	test_identity();
	test_disabled();
	test_session();
	test_abandon();
	test_programmer_errors();
	return test_result();
}
