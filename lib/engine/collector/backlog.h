/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A collector's backlog: raw perf records on their way from the drain thread
 * to the unwinder, so draining never waits for unwinding. One producer, one
 * consumer, a byte ring over a sealed memfd mapped twice back to back (every
 * record is contiguous, however it wraps), a control block in the memfd's
 * first page and an eventfd for wakeups: shared memory, so the consumer can
 * be another process (the sandboxed unwinder) as well as a thread.
 *
 * Records carry their own size (perf_event_header.size, 8-byte multiples).
 * Past a quarter of the data, the producer goes back to the data's start
 * whenever the consumer has caught up (a record of the backlog's own, which
 * peek skips): while the consumer keeps up, the records stay in the memfd's
 * first pages.
 * Each record has a time; the consumer takes a record only once its time is
 * at or below the watermark the producer publishes (the last moment the
 * target was known to be allowed), and once the producer closed the backlog,
 * only up to the cut-off it gave.
 *
 * Neither side trusts the other's half of the control block: a position
 * outside what it could be is -EBADMSG, never a read or write out of bounds.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BACKLOG_MIN_BYTES (1024U * 1024U)

typedef struct Backlog Backlog;

/* A new backlog of at least 'bytes' (rounded up to pages, at least BACKLOG_MIN_BYTES). */
int backlog_new(uint64_t bytes, Backlog **ret);
/*
 * Empty again, for another window of the same consumer (the producer's, once
 * the last consumer is done with it): the pages written before stay, so the
 * next window's records fault none in. -EMSGSIZE (nothing changed) unless it
 * is the size backlog_new(bytes) would make.
 */
int backlog_reset(Backlog *b, uint64_t bytes);
/* The consumer's view of a backlog made elsewhere, from its memfd and eventfd (both taken over). */
int backlog_attach(int memfd, int eventfd, Backlog **ret);
Backlog *backlog_free(Backlog *b);
void backlog_freep(Backlog **b);

/* For handing the backlog to another process (still owned by 'b'). */
int backlog_get_memfd(const Backlog *b);
int backlog_get_eventfd(const Backlog *b);
uint64_t backlog_get_size(const Backlog *b);

/* ---- producer ---- */

/*
 * Append one record, if the backlog would then hold at most 'limit' bytes
 * (records the consumer must not miss get a higher limit than samples):
 * -ENOBUFS when not, -EBADMSG when the consumer's position is impossible.
 */
int backlog_push(Backlog *b, const struct perf_event_header *rec, uint64_t limit);
/* Records up to CLOCK_MONOTONIC 'time' may be consumed (UINT64_MAX: all). */
void backlog_set_watermark(Backlog *b, uint64_t time);
/* Wake the consumer (after a batch of pushes or a new watermark). */
void backlog_notify(Backlog *b);
/*
 * Wake the consumer if what was pushed since its last wakeup is worth one
 * (an eighth of the data, or 100 ms old at CLOCK_MONOTONIC 'now'): each
 * wakeup of another process costs both sides more than the records do.
 * A consumer must still look on its own every so often (the unwinder's
 * 250 ms progress): records pushed last wait for the next call otherwise.
 */
void backlog_notify_batched(Backlog *b, uint64_t now);
/* No more records; the consumer takes what is left up to 'cutoff' and discards the rest. */
void backlog_close(Backlog *b, uint64_t cutoff);
/* The window starts (CLOCK_MONOTONIC and CLOCK_REALTIME): before any sample is pushed. */
void backlog_set_start(Backlog *b, uint64_t mono, uint64_t unix_nanos);
/* The most bytes it held at once. */
uint64_t backlog_get_peak(const Backlog *b);

/* ---- consumer ---- */

/*
 * The oldest record, if any: 1 with *ret pointing into the ring (valid until
 * consumed), 0 when empty, -EBADMSG when the producer's position or the
 * record's size is impossible.
 */
int backlog_peek(Backlog *b, const struct perf_event_header **ret);
/* Done with the record peek returned. */
void backlog_consume(Backlog *b);
uint64_t backlog_get_watermark(const Backlog *b);
/* After close: true, and the cut-off. */
bool backlog_is_closed(const Backlog *b, uint64_t *ret_cutoff);
/* The window's start, once set (false before). */
bool backlog_get_start(const Backlog *b, uint64_t *ret_mono, uint64_t *ret_unix);
/* Sleep until the producer notifies (or 'timeout_ms' passes; -1 = no limit). */
int backlog_wait(Backlog *b, int timeout_ms);
