/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Internal: the program's writer of a span ring, for the span session (span-session.c). */

#include <stddef.h>
#include <stdint.h>

#include "span-ring.h"

typedef struct SpanRingWriter SpanRingWriter;

/* A writer for the ring at 'mem' (size bytes, as profd made it); -EBADMSG when it is not one. */
int span_ring_writer_new(void *mem, size_t size, SpanRingWriter **ret);
/* Spans started in the session write their intervals through it from now on. */
void span_ring_writer_publish(SpanRingWriter *w);
/* No span writes through it any more; kept allocated, as a late writer may still hold it. */
void span_ring_writer_retire(SpanRingWriter *w);
/* A macro-state transition (RunState) at CLOCK_MONOTONIC 'time_ns'. */
void span_ring_writer_put_transition(SpanRingWriter *w, int state, uint64_t time_ns);
