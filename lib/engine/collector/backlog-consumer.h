/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The consumer side of a backlog: records taken in order and handed to a
 * ProfileBuilder, each only once its time is at or below the producer's
 * watermark; once the producer closed the backlog, records after its cut-off
 * are discarded. The same code runs on a Collector's unwind thread and in the
 * sandboxed unwinder, which is why it works in steps a caller can interleave
 * with other work.
 */

#include <stdint.h>

#include "backlog.h"
#include "perf-record.h"
#include "profile-builder.h"

typedef struct BacklogConsumer BacklogConsumer;

/* 'backlog' and 'builder' are borrowed and must outlive the consumer. */
int backlog_consumer_new(Backlog *backlog, const PerfRecordFormat *format, ProfileBuilder *builder,
			 BacklogConsumer **ret);
BacklogConsumer *backlog_consumer_free(BacklogConsumer *c);
void backlog_consumer_freep(BacklogConsumer **c);

/*
 * Take at most 'max' records. Returns 1 when it took some (more may follow),
 * -EAGAIN when nothing can be taken until the producer notifies, 0 once the
 * backlog is closed and everything in it taken, or another negative errno:
 * the builder failed (the record is consumed; later steps only discard) or
 * the backlog is damaged (-EBADMSG: give up on it).
 */
int backlog_consumer_step(BacklogConsumer *c, unsigned max);

/* Samples discarded because they came after the cut-off. */
uint64_t backlog_consumer_get_discarded(const BacklogConsumer *c);
