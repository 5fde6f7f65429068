/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-backlog CASE: the backlog's byte ring on its own, producer and consumer in one
 * thread (the consumer attached to the producer's memfd, as the unwinder is), and in two
 * threads on one Backlog (as a Collector's drain and unwind threads are).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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

#define SHARED_RECORDS 2000000U

typedef struct Shared {
	Backlog *b;
	_Atomic bool stop; /* the consumer gave up */
} Shared;

/* The drain thread's side: every record pushed, waiting for room when the ring is full. */
static void *shared_produce(void *arg)
{
	Shared *sh = arg;
	Backlog *b = sh->b;
	Record rec;

	for (uint64_t seq = 0; seq < SHARED_RECORDS && !sh->stop; seq++) {
		int r;

		record_init(&rec, seq);
		rec.header.size = (uint16_t)(24 + (seq % 5) * 8); /* small: many pushes per lap */
		while ((r = backlog_push(b, &rec.header, SIZE)) == -ENOBUFS && !sh->stop)
			sched_yield();
		if (r < 0)
			return (void *)(intptr_t)r;
		backlog_notify(b);
	}
	backlog_close(b, UINT64_MAX);
	return NULL;
}

/*
 * One Backlog for both sides, as a Collector consumes its own: the producer reading
 * the consumer's position while the consumer moves it never sees it go backwards, and
 * every record arrives once, in order.
 */
static int test_shared(void)
{
	_cleanup_(backlog_freep) Backlog *b = NULL;
	Shared sh = {};
	uint64_t taken = 0;
	pthread_t producer;
	void *result;

	CHECK(backlog_new(SIZE, &b) == 0, "backlog_new");
	sh.b = b;
	CHECK(pthread_create(&producer, NULL, shared_produce, &sh) == 0, "pthread_create");
	while (taken < SHARED_RECORDS) {
		const struct perf_event_header *h;
		/* read before peeking: once it is set, every record is in */
		bool closed = backlog_is_closed(b, NULL);
		uint64_t seq;
		int r = backlog_peek(b, &h);

		if (r == 0 && closed)
			break;
		if (r == 0) {
			sched_yield();
			continue;
		}
		CHECK(r == 1, "peek %d after %llu records", r, (unsigned long long)taken);
		if (r != 1)
			break;
		memcpy(&seq, h + 1, sizeof(seq));
		CHECK(seq == taken, "record %llu where %llu was due", (unsigned long long)seq,
		      (unsigned long long)taken);
		if (seq != taken)
			break;
		backlog_consume(b);
		taken++;
	}
	sh.stop = true;
	pthread_join(producer, &result);
	CHECK(result == NULL, "push failed: %d", (int)(intptr_t)result);
	CHECK(taken == SHARED_RECORDS, "%llu of %u records taken", (unsigned long long)taken,
	      SHARED_RECORDS);
	return test_result();
}

/*
 * A backlog used again: after a window whose consumer took everything and another
 * window's worth of state (closed, a start, a watermark, a peak), reset() leaves an empty
 * backlog a new consumer attaches to at 0, sees none of that, and takes a new window's
 * records whole; the pages the first window wrote are the ones the second writes (none
 * more). A size other than its own is refused and changes nothing.
 */
static int test_reset(void)
{
	_cleanup_(backlog_freep) Backlog *producer = NULL, *consumer = NULL, *again = NULL;
	const struct perf_event_header *h;
	uint64_t pushed = 0, taken = 0, mono, unix_nanos, pages;

	CHECK(backlog_new(SIZE, &producer) == 0, "backlog_new");
	consumer = attach(producer);
	backlog_set_start(producer, 1, 2);
	backlog_set_watermark(producer, 5);
	if (!push_and_take(producer, consumer, 2ULL * SIZE, &pushed, &taken))
		return test_result();
	backlog_close(producer, 7);
	pages = touched(producer);
	consumer = backlog_free(consumer);

	CHECK(backlog_reset(producer, 2 * SIZE) == -EMSGSIZE, "reset to twice the size");
	CHECK(backlog_reset(producer, SIZE / 2) == -EMSGSIZE, "reset to half the size");
	CHECK(backlog_is_closed(producer, NULL), "a refused reset reopened it");
	CHECK(backlog_reset(producer, SIZE) == 0, "reset");
	CHECK(!backlog_is_closed(producer, NULL), "still closed after the reset");
	CHECK(!backlog_get_start(producer, &mono, &unix_nanos), "the last window's start kept");
	CHECK(backlog_get_watermark(producer) == UINT64_MAX, "watermark %llu after the reset",
	      (unsigned long long)backlog_get_watermark(producer));
	CHECK(backlog_get_peak(producer) == 0, "peak %llu after the reset",
	      (unsigned long long)backlog_get_peak(producer));

	again = attach(producer);
	CHECK(backlog_peek(again, &h) == 0, "a record of the last window after the reset");
	pushed = taken = 0;
	if (!push_and_take(producer, again, 2ULL * SIZE, &pushed, &taken))
		return test_result();
	CHECK(backlog_peek(again, &h) == 0, "something left after the last record");
	CHECK(touched(producer) == pages, "%llu bytes have pages after the second window, %llu "
	      "after the first", (unsigned long long)touched(producer), (unsigned long long)pages);
	return test_result();
}

/* The consumer's eventfd was written since the last look (and is drained now). */
static bool woken(Backlog *b)
{
	uint64_t v;

	return read(backlog_get_eventfd(b), &v, sizeof(v)) == (ssize_t)sizeof(v);
}

/*
 * Batched wakeups: nothing pushed, no wakeup; a record, a wakeup at first (nothing was
 * ever notified) and then none until an eighth of the data waits or 100 ms have passed;
 * a plain notify always wakes.
 */
static int test_notify(void)
{
	_cleanup_(backlog_freep) Backlog *b = NULL;
	const uint64_t t = 1000000000ULL, ms = 1000000ULL;
	uint64_t pushed = 0, bytes = 0;
	Record rec;

	CHECK(backlog_new(SIZE, &b) == 0, "backlog_new");
	CHECK(fcntl(backlog_get_eventfd(b), F_GETFL) & O_NONBLOCK, "a blocking eventfd");
	backlog_notify_batched(b, t);
	CHECK(!woken(b), "woken with nothing pushed");
	record_init(&rec, pushed++);
	CHECK(backlog_push(b, &rec.header, SIZE) == 0, "push");
	backlog_notify_batched(b, t);
	CHECK(woken(b), "the first record woke nobody");
	record_init(&rec, pushed++);
	CHECK(backlog_push(b, &rec.header, SIZE) == 0, "push");
	backlog_notify_batched(b, t + 99 * ms);
	CHECK(!woken(b), "woken for one record 99 ms after the last wakeup");
	backlog_notify_batched(b, t + 100 * ms);
	CHECK(woken(b), "a record 100 ms old woke nobody");
	while (bytes < SIZE / 8) {
		record_init(&rec, pushed++);
		CHECK(backlog_push(b, &rec.header, SIZE) == 0, "push");
		bytes += rec.header.size;
		backlog_notify_batched(b, t + 100 * ms);
		if (bytes < SIZE / 8)
			CHECK(!woken(b), "woken with %llu bytes waiting", (unsigned long long)bytes);
		else
			CHECK(woken(b), "an eighth of the data waiting woke nobody");
	}
	backlog_notify(b);
	CHECK(woken(b), "notify woke nobody");
	return test_result();
}

int main(int argc, char **argv)
{
	static const TestCase cases[] = {
		{ "rewind", test_rewind },
		{ "lagging", test_lagging },
		{ "shared", test_shared },
		{ "reset", test_reset },
		{ "notify", test_notify },
	};

	return test_run_case(argc, argv, cases, ELEMENTSOF(cases));
}
