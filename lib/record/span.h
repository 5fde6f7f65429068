/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Stage spans for instrumented programs, ported from keyhog_profile.
 *
 * Disabled, a span costs one relaxed atomic load and reads no clock. Enabled,
 * it reads CLOCK_MONOTONIC twice and adds to static atomic counters, never
 * allocating. Counters exist twice: global ones (taken with
 * span_take_stage_measurements()) and session ones that only spans started
 * while the process-global SpanSession (record.h) is active add to. While the
 * session is part of a live run with profd (span_session_attach_ring()), a
 * session span also writes its interval (tid, stage, begin, end) into the
 * run's shared span ring: a few stores, no lock, no system call.
 *
 *	SPAN_SCOPE(STAGE_DECODE);          // measured until the end of the block
 *
 *	Span s = span_begin(STAGE_ENTROPY);
 *	...
 *	span_end(&s);
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "stage.h"

/* Attribution of the work a thread does: inside a derived (decoded) input or not. */
typedef enum Attribution {
	ATTRIBUTION_ROOT,
	ATTRIBUTION_DECODED,
} Attribution;

typedef struct SpanCounters {
	_Atomic uint64_t elapsed_ns[_STAGE_MAX];
	_Atomic uint64_t calls[_STAGE_MAX];
	_Atomic uint64_t attributed_ns[_STAGE_MAX];
	_Atomic uint64_t input_bytes;
	_Atomic uint64_t input_units;
} SpanCounters;

/* Private to the inline hot path below; use the functions. */
typedef struct SpanRingWriter SpanRingWriter;
typedef struct SpanSwitches {
	atomic_bool enabled;
	atomic_bool session_active;
	/* the live run's span ring (span-ring.h) session spans also write to, or NULL */
	SpanRingWriter *_Atomic ring;
} SpanSwitches;
extern SpanSwitches span_switches_;
extern SpanCounters span_global_counters_;
extern SpanCounters span_session_counters_;
extern _Thread_local Attribution span_attribution_;

typedef struct Span {
	uint64_t started_ns;
	Stage stage;
	bool recording;         /* read the clock and will record */
	bool session_recording; /* started while the session was active */
} Span;

/* Whether stage profiling is on. */
static inline bool span_enabled(void)
{
	return atomic_load_explicit(&span_switches_.enabled, memory_order_relaxed);
}

/* Switch stage profiling on or off; SpanSession does this for operator runs. */
void span_set_enabled(bool enabled);

/* Replace this thread's attribution and return the previous one. */
Attribution span_set_attribution(Attribution attribution);

static inline uint64_t span_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

static inline Span span_begin(Stage stage)
{
	Span span = { .stage = stage };

	if (__builtin_expect(span_enabled(), 0)) {
		span.recording = true;
		span.session_recording = atomic_load_explicit(&span_switches_.session_active,
							      memory_order_relaxed);
		span.started_ns = span_now_ns();
	}
	return span;
}

/* Write a session span's interval into the live run's span ring (span-ring.c). */
void span_ring_put_(Stage stage, uint64_t begin_ns, uint64_t end_ns);

static inline void span_counters_add_(SpanCounters *c, Stage stage, uint64_t elapsed, bool decoded)
{
	atomic_fetch_add_explicit(&c->elapsed_ns[stage], elapsed, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->calls[stage], 1, memory_order_relaxed);
	if (decoded)
		atomic_fetch_add_explicit(&c->attributed_ns[stage], elapsed, memory_order_relaxed);
}

/* End a span; does nothing for a span begun while disabled. Safe to call once. */
static inline void span_end(Span *span)
{
	uint64_t now, elapsed;
	bool decoded;

	if (!span->recording)
		return;
	span->recording = false;
	now = span_now_ns();
	elapsed = now - span->started_ns;
	decoded = span_attribution_ == ATTRIBUTION_DECODED;
	span_counters_add_(&span_global_counters_, span->stage, elapsed, decoded);
	if (span->session_recording) {
		span_counters_add_(&span_session_counters_, span->stage, elapsed, decoded);
		if (atomic_load_explicit(&span_switches_.ring, memory_order_relaxed))
			span_ring_put_(span->stage, span->started_ns, now);
	}
}

#define SPAN_UNIQ_(a, b) a##b
#define SPAN_UNIQ(a, b) SPAN_UNIQ_(a, b)
/* Measure from here to the end of the enclosing block. */
#define SPAN_SCOPE(stage) \
	__attribute__((cleanup(span_end), unused)) Span SPAN_UNIQ(span_scope_, __COUNTER__) = \
		span_begin(stage)

static inline void span_counters_add_input_(_Atomic uint64_t *global, _Atomic uint64_t *session,
					    uint64_t n)
{
	if (!span_enabled())
		return;
	atomic_fetch_add_explicit(global, n, memory_order_relaxed);
	if (atomic_load_explicit(&span_switches_.session_active, memory_order_relaxed))
		atomic_fetch_add_explicit(session, n, memory_order_relaxed);
}

/* Source bytes processed by the current profile. */
static inline void span_add_input_bytes(uint64_t bytes)
{
	span_counters_add_input_(&span_global_counters_.input_bytes,
				 &span_session_counters_.input_bytes, bytes);
}

/* Source units (files, objects, responses, chunks) processed. */
static inline void span_add_input_units(uint64_t units)
{
	span_counters_add_input_(&span_global_counters_.input_units,
				 &span_session_counters_.input_units, units);
}

/*
 * Read and clear the global stage counters: fills ret with the non-zero
 * stages in wire order (extra = NULL) and returns how many.
 */
size_t span_take_stage_measurements(StageMeasurement ret[static _STAGE_MAX]);
/* Read and clear the global input totals. */
void span_take_input_totals(uint64_t *ret_bytes, uint64_t *ret_units);
/* Discard the global stage counters and input totals. */
void span_reset(void);
