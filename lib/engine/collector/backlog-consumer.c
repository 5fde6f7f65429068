/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "backlog-consumer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cleanup.h"

struct BacklogConsumer {
	Backlog *backlog;
	PerfRecordFormat format;
	ProfileBuilder *builder;
	bool started; /* the builder knows the window's start */
	bool failed;  /* the builder failed: discard the rest */
	uint64_t discarded;
};

int backlog_consumer_new(Backlog *backlog, const PerfRecordFormat *format, ProfileBuilder *builder,
			 BacklogConsumer **ret)
{
	BacklogConsumer *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*c = (BacklogConsumer){ .backlog = backlog, .format = *format, .builder = builder };
	*ret = c;
	return 0;
}

BacklogConsumer *backlog_consumer_free(BacklogConsumer *c)
{
	free(c);
	return NULL;
}

void backlog_consumer_freep(BacklogConsumer **c)
{
	backlog_consumer_free(*c);
}

static uint64_t record_time(const PerfRecord *rec)
{
	return rec->type == PERF_RECORD_SAMPLE ? rec->sample.time : rec->id.time;
}

/* Tell the builder the window's start once the producer set it; false before. */
static bool consumer_start(BacklogConsumer *c)
{
	uint64_t mono, unix_nanos;

	if (!c->started && backlog_get_start(c->backlog, &mono, &unix_nanos)) {
		profile_builder_set_start(c->builder, mono, unix_nanos);
		c->started = true;
	}
	return c->started;
}

/* Hand one record to the builder; samples place themselves in the window first. */
static int consumer_take(BacklogConsumer *c, const PerfRecord *rec)
{
	if (c->failed)
		return 0;
	/* the producer sets the start before it pushes any sample */
	if (rec->type == PERF_RECORD_SAMPLE && !consumer_start(c))
		return -EBADMSG;
	return profile_builder_add(c->builder, rec);
}

int backlog_consumer_step(BacklogConsumer *c, unsigned max)
{
	for (unsigned n = 0; n < max; n++) {
		const struct perf_event_header *raw;
		uint64_t cutoff = UINT64_MAX, limit;
		/* read before peeking: once it is set, every record is in */
		bool closed = backlog_is_closed(c->backlog, &cutoff);
		PerfRecord rec;
		int r;

		r = backlog_peek(c->backlog, &raw);
		if (r < 0)
			return r;
		if (r == 0 && closed) {
			consumer_start(c); /* a window without samples starts all the same */
			return 0;
		}
		if (r == 0)
			return n > 0 ? 1 : -EAGAIN;
		r = perf_record_parse(&c->format, raw, raw->size, &rec);
		if (r < 0)
			return -EBADMSG;
		limit = closed ? cutoff : backlog_get_watermark(c->backlog);
		if (record_time(&rec) > limit && !closed)
			/* not known to be allowed yet: the producer's next check tells */
			return n > 0 ? 1 : -EAGAIN;
		r = 0;
		if (record_time(&rec) > limit)
			c->discarded += rec.type == PERF_RECORD_SAMPLE ? rec.sample.weight ?: 1 : 0;
		else
			r = consumer_take(c, &rec);
		backlog_consume(c->backlog);
		if (r < 0) {
			c->failed = true;
			return r;
		}
	}
	return 1;
}

uint64_t backlog_consumer_get_discarded(const BacklogConsumer *c)
{
	return c->discarded;
}
