/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-backlog CASE: the backlog's byte ring on its own, producer and consumer in one
 * thread (the consumer attached to the producer's memfd, as the unwinder is).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backlog.h"
#include "cleanup.h"
#include "test-util.h"

#define SIZE (4U * 1024U * 1024U)

typedef struct Record {
	struct perf_event_header header;
	uint64_t seq;
	uint8_t payload[16384];
} Record;

static Backlog *attach(Backlog *producer)
{
	Backlog *consumer = NULL;
	int memfd = fcntl(backlog_get_memfd(producer), F_DUPFD_CLOEXEC, 3);
	int eventfd = fcntl(backlog_get_eventfd(producer), F_DUPFD_CLOEXEC, 3);

	if (backlog_attach(memfd, eventfd, &consumer) < 0)
		abort();
	return consumer;
}

static void record_init(Record *r, uint64_t seq)
{
	/* sizes that do not divide the ring: the records straddle the lap's end */
	r->header = (struct perf_event_header){ .type = PERF_RECORD_SAMPLE,
						.size = (uint16_t)(24 + (seq % 7) * 2344) };
	r->seq = seq;
	memset(r->payload, (int)(seq & 0xff), r->header.size - 16);
}

/* Take one record and check it is the one 'seq' pushed, whole. */
static bool take(Backlog *consumer, uint64_t seq)
{
	const struct perf_event_header *h;
	Record want;
	int r;

	record_init(&want, seq);
	r = backlog_peek(consumer, &h);
	CHECK(r == 1, "peek %d for record %llu", r, (unsigned long long)seq);
	if (r != 1)
		return false;
	CHECK(h->size == want.header.size && memcmp(h, &want, want.header.size) == 0,
	      "record %llu: type %u size %u, wanted size %u", (unsigned long long)seq, h->type,
	      h->size, want.header.size);
	backlog_consume(consumer);
	return true;
}

/*
 * Push records until 'bytes' went in, taking the next one after each push ('taken' trails
 * 'pushed' by what the consumer lags); false once one came out wrong.
 */
static bool push_and_take(Backlog *producer, Backlog *consumer, uint64_t bytes,
			  uint64_t *pushed, uint64_t *taken)
{
	Record rec;

	for (uint64_t n = 0; n < bytes; (*pushed)++) {
		record_init(&rec, *pushed);
		CHECK(backlog_push(producer, &rec.header, SIZE) == 0, "push %llu",
		      (unsigned long long)*pushed);
		n += rec.header.size;
		if (!take(consumer, (*taken)++))
			return false;
	}
	return true;
}

/* Bytes of the memfd that have pages: the ring's part that records ever reached. */
static uint64_t touched(Backlog *b)
{
	struct stat st;

	if (fstat(backlog_get_memfd(b), &st) < 0)
		abort();
	return (uint64_t)st.st_blocks * 512;
}

/*
 * A consumer that keeps up: 16 laps' worth of records, each taken before the next is
 * pushed, arrive whole and in order, and the producer goes back to the start instead of
 * walking the whole ring: the memfd's pages stay within a quarter of it and a record.
 */
static int test_rewind(void)
{
	_cleanup_(backlog_freep) Backlog *producer = NULL, *consumer = NULL;
	const struct perf_event_header *h;
	uint64_t pushed = 0, taken = 0;

	CHECK(backlog_new(SIZE, &producer) == 0, "backlog_new");
	consumer = attach(producer);
	if (!push_and_take(producer, consumer, 16ULL * SIZE, &pushed, &taken))
		return test_result();
	CHECK(backlog_peek(consumer, &h) == 0, "something left after the last record");
	CHECK(touched(producer) <= SIZE / 4 + sizeof(Record) + 2 * 4096,
	      "%llu bytes of the %u-byte ring have pages", (unsigned long long)touched(producer),
	      SIZE);
	CHECK(backlog_get_peak(producer) <= sizeof(Record), "peak %llu with one record at a time",
	      (unsigned long long)backlog_get_peak(producer));
	return test_result();
}

/*
 * A consumer that lags: never empty when the producer pushes, so no rewind; the records
 * fill the ring up to the limit as before, and all of them come out in order.
 */
static int test_lagging(void)
{
	_cleanup_(backlog_freep) Backlog *producer = NULL, *consumer = NULL;
	uint64_t bytes, pushed = 0, taken = 0;
	Record rec;
	int r;

	CHECK(backlog_new(SIZE, &producer) == 0, "backlog_new");
	consumer = attach(producer);
	/* past a quarter first, with the consumer keeping up: the next lap starts at 0 */
	if (!push_and_take(producer, consumer, SIZE / 2, &pushed, &taken))
		return test_result();
	/* then one record behind: a full ring's worth goes through */
	record_init(&rec, pushed++);
	CHECK(backlog_push(producer, &rec.header, SIZE) == 0, "push");
	if (!push_and_take(producer, consumer, 2ULL * SIZE, &pushed, &taken))
		return test_result();
	/* the consumer stops: the ring takes records until it is full */
	for (bytes = 0;; pushed++) {
		record_init(&rec, pushed);
		r = backlog_push(producer, &rec.header, SIZE);
		if (r < 0)
			break;
		bytes += rec.header.size;
	}
	CHECK(r == -ENOBUFS, "push into a full backlog: %d", r);
	CHECK(bytes + 2 * sizeof(Record) > SIZE - sizeof(Record),
	      "only %llu bytes taken before the ring was full", (unsigned long long)bytes);
	while (taken < pushed)
		if (!take(consumer, taken++))
			return test_result();
	CHECK(backlog_get_peak(producer) <= SIZE, "peak %llu", (unsigned long long)backlog_get_peak(producer));
	return test_result();
}

int main(int argc, char **argv)
{
	static const TestCase cases[] = {
		{ "rewind", test_rewind },
		{ "lagging", test_lagging },
	};

	return test_run_case(argc, argv, cases, ELEMENTSOF(cases));
}
