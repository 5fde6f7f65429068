/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The process-global span session: a RunRecorder of this
 * process plus the session span counters. Spans use static counters, so only
 * one session may own them at a time.
 */
#include <errno.h>
#include <string.h>

#include "assert-return.h"
#include "cleanup.h"
#include "record.h"
#include "span-counters.h"
#include "span-ring-writer.h"
#include "span.h"

struct SpanSession {
	RunRecorder *recorder;
	SpanRingWriter *ring; /* of a live run, while attached */
	bool finished;
};

/* Forget everything spans and sessions counted, and switch spans off. */
static void release_slot(SpanSession *s)
{
	span_session_detach_ring(s);
	span_set_enabled(false);
	span_counters_reset(&span_global_counters_);
	span_counters_reset(&span_session_counters_);
	atomic_store_explicit(&span_switches_.session_active, false, memory_order_release);
}

int span_session_start(RunIdentity *identity, SpanSession **ret)
{
	_cleanup_free_ SpanSession *s = NULL;
	bool expected = false;
	int r;

	assert_return(identity && ret, -EINVAL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (!atomic_compare_exchange_strong_explicit(&span_switches_.session_active, &expected, true,
						     memory_order_acq_rel, memory_order_acquire))
		return -EBUSY;
	span_counters_reset(&span_global_counters_);
	span_counters_reset(&span_session_counters_);
	span_set_enabled(true);
	r = run_recorder_new(0, identity, &s->recorder);
	if (r < 0) {
		release_slot(s);
		return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

RunIdentity *span_session_identity(SpanSession *s)
{
	return run_recorder_identity(s->recorder);
}

/* The latest transition of the recorder, into the ring. */
static void ring_put_last_transition(SpanSession *s)
{
	const StateTransition *t;
	size_t n = run_recorder_transitions(s->recorder, &t);

	if (s->ring && n > 0)
		span_ring_writer_put_transition(s->ring, (int)t[n - 1].state,
						run_recorder_started_ns(s->recorder) + t[n - 1].elapsed_ns);
}

int span_session_transition(SpanSession *s, RunState state)
{
	int r;

	assert_return(s, -EINVAL);
	r = run_recorder_transition(s->recorder, state);
	if (r >= 0)
		ring_put_last_transition(s);
	return r;
}

int span_session_attach_ring(SpanSession *s, void *mem, size_t size)
{
	const StateTransition *t;
	uint64_t started;
	size_t n;
	int r;

	assert_return(s && mem, -EINVAL);
	if (s->finished)
		return -ESTALE;
	if (s->ring)
		return -EBUSY;
	r = span_ring_writer_new(mem, size, &s->ring);
	if (r < 0)
		return r;
	/* the transitions so far first, so the ring tells the whole run from "created" on */
	n = run_recorder_transitions(s->recorder, &t);
	started = run_recorder_started_ns(s->recorder);
	for (size_t i = 0; i < n; i++)
		span_ring_writer_put_transition(s->ring, (int)t[i].state, started + t[i].elapsed_ns);
	span_ring_writer_publish(s->ring);
	return 0;
}

void span_session_detach_ring(SpanSession *s)
{
	span_ring_writer_retire(s->ring);
	s->ring = NULL;
}

int span_session_finish(SpanSession *s, RunState status, RunProfile **ret)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	StageMeasurement stages[_STAGE_MAX];
	size_t n;
	int r;

	assert_return(s && ret, -EINVAL);
	if (s->finished)
		return -ESTALE;
	r = run_recorder_finish(s->recorder, status, &p);
	if (r < 0)
		return r;
	span_set_enabled(false);
	/* the final transition, which the recorder handed over with the record */
	if (s->ring)
		span_ring_writer_put_transition(s->ring, (int)status,
						run_recorder_started_ns(s->recorder) +
						p->transitions[p->n_transitions - 1].elapsed_ns);
	span_counters_take_input(&span_session_counters_, &p->input_bytes, &p->input_units);
	n = span_counters_take_stages(&span_session_counters_, stages);
	if (n > 0) {
		p->stages = malloc(n * sizeof(*stages));
		if (!p->stages) {
			/* finishing failed: the session ends as abandoned when freed */
			return -ENOMEM;
		}
		memcpy(p->stages, stages, n * sizeof(*stages));
		p->n_stages = n;
	}
	release_slot(s);
	s->finished = true;
	*ret = TAKE_PTR(p);
	return 0;
}

SpanSession *span_session_free(SpanSession *s)
{
	if (!s)
		return NULL;
	if (!s->finished)
		release_slot(s);
	run_recorder_free(s->recorder);
	free(s);
	return NULL;
}

void span_session_freep(SpanSession **s)
{
	*s = span_session_free(*s);
}
