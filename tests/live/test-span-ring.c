/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The span ring without a daemon: a real span session writes its intervals
 * and transitions into a ring made by the reader, and the reader gets exactly
 * them back (nested spans, two threads, a reader that falls behind counts
 * what it lost); a program that scribbles over its ring spoils only what it
 * wrote and is counted; a forked child writes nothing; the join labels
 * samples with the innermost stage and the state of their time (the same
 * stage a scan of every span finds, for spans and samples in any order),
 * counts the hottest functions, and labels and markers survive the profile
 * file and filter the profile.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "live-record.h"
#include "profile-file.h"
#include "record.h"
#include "span-log.h"
#include "span.h"
#include "stage-join.h"
#include "test-util.h"

#define SPANS_PER_THREAD 300

typedef struct Ring {
	SpanRingReader *reader;
	void *mem; /* the program's mapping */
	size_t size;
} Ring;

static void ring_open(Ring *ring, uint32_t n_slots, uint32_t slot_records)
{
	SpanRingReaderOptions o = {
		.geometry = { .n_slots = n_slots, .slot_records = slot_records },
		.max_spans = 1000000,
	};
	struct stat st;
	int fd, r;

	r = span_ring_reader_new(&o, &fd, &ring->reader);
	if (r < 0) {
		fprintf(stderr, "cannot make a span ring: %s\n", strerror(-r));
		exit(EXIT_FAILURE);
	}
	CHECK(fstat(fd, &st) == 0, "%m");
	ring->size = (size_t)st.st_size;
	/* the seals hold: the program can neither shrink nor grow the ring */
	CHECK(ftruncate(fd, 0) < 0 && errno == EPERM, "shrinking the ring was allowed");
	CHECK(ftruncate(fd, (off_t)ring->size * 2) < 0 && errno == EPERM, "growing the ring was allowed");
	ring->mem = mmap(NULL, ring->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(ring->mem != MAP_FAILED, "%m");
	close(fd);
}

static void ring_close(Ring *ring)
{
	span_ring_reader_free(ring->reader);
	munmap(ring->mem, ring->size);
}

static SpanSession *session_start(void)
{
	SpanSession *s = NULL;
	RunIdentity id;

	if (run_identity_new("1", "d", "c", "test", "test", "auto", &id) < 0 ||
	    span_session_start(&id, &s) < 0)
		abort();
	return s;
}

typedef struct Worker {
	pid_t tid;
	uint64_t first_begin, last_end;
} Worker;

/* Nested spans: decode inside scan, SPANS_PER_THREAD of each. */
static void *worker(void *arg)
{
	Worker *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	w->first_begin = span_now_ns();
	for (unsigned i = 0; i < SPANS_PER_THREAD; i++) {
		SPAN_SCOPE(STAGE_PHASE2_PREFILTER);
		{
			SPAN_SCOPE(STAGE_DECODE);
		}
	}
	w->last_end = span_now_ns();
	return NULL;
}

static void test_session_into_ring(void)
{
	_cleanup_(span_log_freep) SpanLog *log = NULL;
	_cleanup_run_profile_ RunProfile *record = NULL;
	Worker w[2] = {};
	pthread_t t[2];
	unsigned per_tid[2][_STAGE_MAX] = {};
	SpanSession *s = session_start();
	Ring ring;

	ring_open(&ring, 8, 1024);
	CHECK(span_session_transition(s, RUN_STATE_ACQUIRING) == 0, "transition");
	CHECK(span_session_attach_ring(s, ring.mem, ring.size) == 0, "attach");
	CHECK(span_session_attach_ring(s, ring.mem, ring.size) == -EBUSY, "second attach");
	CHECK(span_session_transition(s, RUN_STATE_SCANNING) == 0, "transition");
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &w[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(span_session_finish(s, RUN_STATE_COMPLETED, &record) == 0, "finish");
	span_session_free(s);
	/* spans after the session are not the run's */
	{
		SPAN_SCOPE(STAGE_ENTROPY);
	}

	CHECK(span_ring_reader_drain(ring.reader, span_now_ns()) == 0, "drain");
	CHECK(span_ring_reader_take_log(ring.reader, &log) == 0, "take");
	CHECK(log->n_intervals == 4 * SPANS_PER_THREAD, "%zu intervals", log->n_intervals);
	CHECK(log->stats.threads == 2, "%u threads", log->stats.threads);
	CHECK(log->stats.spans_lost == 0 && log->stats.spans_invalid == 0 && log->stats.ring_errors == 0,
	      "lost %lu invalid %lu errors %lu", log->stats.spans_lost, log->stats.spans_invalid,
	      log->stats.ring_errors);
	for (size_t i = 0; i < log->n_intervals; i++) {
		const SpanInterval *iv = &log->intervals[i];
		int k = iv->tid == (uint32_t)w[0].tid ? 0 : iv->tid == (uint32_t)w[1].tid ? 1 : -1;

		CHECK(k >= 0, "interval of tid %u", iv->tid);
		if (k < 0)
			continue;
		CHECK(iv->begin_ns <= iv->end_ns && iv->begin_ns >= w[k].first_begin &&
		      iv->end_ns <= w[k].last_end, "interval %zu outside its thread's work", i);
		per_tid[k][iv->stage]++;
		/* inner spans end first: each decode lies inside the scan written after it */
		if (iv->stage == STAGE_DECODE && i + 1 < log->n_intervals) {
			const SpanInterval *outer = &log->intervals[i + 1];

			CHECK(outer->stage == STAGE_PHASE2_PREFILTER && outer->begin_ns <= iv->begin_ns &&
			      outer->end_ns >= iv->end_ns, "decode %zu not inside its scan", i);
		}
	}
	for (int k = 0; k < 2; k++)
		CHECK(per_tid[k][STAGE_DECODE] == SPANS_PER_THREAD &&
		      per_tid[k][STAGE_PHASE2_PREFILTER] == SPANS_PER_THREAD,
		      "thread %d: %u decode, %u prefilter", k, per_tid[k][STAGE_DECODE],
		      per_tid[k][STAGE_PHASE2_PREFILTER]);
	/* the transitions are the record's, from "created" on, at the record's times */
	CHECK(log->n_transitions == record->n_transitions, "%zu transitions, the record has %zu",
	      log->n_transitions, record->n_transitions);
	for (size_t i = 0; i < log->n_transitions && i < record->n_transitions; i++) {
		CHECK(log->transitions[i].state == record->transitions[i].state, "transition %zu", i);
		CHECK(log->transitions[i].time_ns - log->transitions[0].time_ns ==
		      record->transitions[i].elapsed_ns, "transition %zu time", i);
	}
	ring_close(&ring);
}

static void test_reader_behind(void)
{
	_cleanup_(span_log_freep) SpanLog *log = NULL;
	SpanSession *s = session_start();
	Ring ring;

	/* 64 records per slot, 1000 spans before the first drain: the newest 64 stay */
	ring_open(&ring, 2, 64);
	CHECK(span_session_attach_ring(s, ring.mem, ring.size) == 0, "attach");
	for (unsigned i = 0; i < 1000; i++) {
		SPAN_SCOPE(STAGE_ENTROPY);
	}
	CHECK(span_ring_reader_drain(ring.reader, span_now_ns()) == 0, "drain");
	for (unsigned i = 0; i < 10; i++) {
		SPAN_SCOPE(STAGE_REPORTING);
	}
	CHECK(span_ring_reader_drain(ring.reader, span_now_ns()) == 0, "drain");
	span_session_free(s);
	CHECK(span_ring_reader_take_log(ring.reader, &log) == 0, "take");
	CHECK(log->stats.spans == 74 && log->stats.spans_lost == 936, "kept %lu lost %lu",
	      log->stats.spans, log->stats.spans_lost);
	CHECK(log->n_intervals == 74 && log->intervals[73].stage == STAGE_REPORTING, "the newest are kept");
	ring_close(&ring);
}

/* Three threads, one slot each in a ring of two: the third records nothing and says so. */
static void *one_span(void *arg)
{
	SPAN_SCOPE(STAGE_SUPPRESSION);
	return arg;
}

static void test_slots_exhausted(void)
{
	_cleanup_(span_log_freep) SpanLog *log = NULL;
	SpanSession *s = session_start();
	pthread_t t;
	Ring ring;

	ring_open(&ring, 2, 64);
	CHECK(span_session_attach_ring(s, ring.mem, ring.size) == 0, "attach");
	for (int i = 0; i < 3; i++) {
		pthread_create(&t, NULL, one_span, NULL);
		pthread_join(t, NULL);
	}
	span_session_free(s);
	CHECK(span_ring_reader_drain(ring.reader, span_now_ns()) == 0, "drain");
	CHECK(span_ring_reader_take_log(ring.reader, &log) == 0, "take");
	CHECK(log->stats.spans == 2 && log->stats.threads == 2 && log->stats.threads_without_slot == 1,
	      "spans %lu threads %u without %u", log->stats.spans, log->stats.threads,
	      log->stats.threads_without_slot);
	ring_close(&ring);
}

/* A forked child is another process: its spans and transitions stay out of the parent's ring. */
static void test_fork(void)
{
	_cleanup_(span_log_freep) SpanLog *log = NULL;
	SpanSession *s = session_start();
	int status;
	pid_t pid;
	Ring ring;

	ring_open(&ring, 4, 64);
	CHECK(span_session_attach_ring(s, ring.mem, ring.size) == 0, "attach");
	{
		SPAN_SCOPE(STAGE_DECODE);
	}
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 10; i++) {
			SPAN_SCOPE(STAGE_ENTROPY);
		}
		span_session_transition(s, RUN_STATE_VERIFYING);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "child");
	span_session_free(s);
	CHECK(span_ring_reader_drain(ring.reader, span_now_ns()) == 0, "drain");
	CHECK(span_ring_reader_take_log(ring.reader, &log) == 0, "take");
	CHECK(log->stats.spans == 1 && log->intervals[0].stage == STAGE_DECODE, "%lu spans",
	      log->stats.spans);
	for (size_t i = 0; i < log->n_transitions; i++)
		CHECK(log->transitions[i].state != RUN_STATE_VERIFYING, "the child's transition");
	ring_close(&ring);
}

/* The program writes garbage everywhere while profd reads: profd never trusts a byte of it. */
static void test_hostile_ring(void)
{
	_cleanup_(span_log_freep) SpanLog *log = NULL, *log2 = NULL;
	uint64_t now = span_now_ns();
	SpanRingHeader *h;
	SpanRingSlot *slot;
	Ring ring;

	ring_open(&ring, 4, 16);
	h = ring.mem;
	srand(7);
	for (int round = 0; round < 200; round++) {
		uint8_t *b = ring.mem;

		for (int i = 0; i < 4096; i++)
			b[(size_t)rand() % ring.size] = (uint8_t)rand();
		if (round % 3 == 0)
			atomic_store(&h->slots_claimed, (uint32_t)rand());
		if (round % 5 == 0)
			atomic_store(&h->transitions_claimed, UINT32_MAX);
		CHECK(span_ring_reader_drain(ring.reader, now) == 0, "drain of a scribbled ring");
	}
	CHECK(span_ring_reader_take_log(ring.reader, &log) == 0, "take");
	CHECK(log->stats.spans_invalid + log->stats.spans > 0 || log->stats.ring_errors > 0,
	      "nothing was read from the scribbled ring");
	CHECK(log->n_intervals == log->stats.spans, "kept %lu, listed %zu", log->stats.spans,
	      log->n_intervals);
	for (size_t i = 0; i < log->n_intervals; i++)
		CHECK(log->intervals[i].stage < _STAGE_MAX &&
		      log->intervals[i].begin_ns <= log->intervals[i].end_ns &&
		      log->intervals[i].end_ns <= now + 1000000000ULL, "a bad interval was kept");
	ring_close(&ring);

	/* one good record, then a head that goes back and a record from the future */
	ring_open(&ring, 2, 16);
	h = ring.mem;
	slot = span_ring_slot(ring.mem, h->slot_offset, h->slot_size, 0);
	slot->records[0] = (SpanRingRecord){ .begin_ns = now - 10, .end_ns = now - 5, .stage = 3 };
	slot->records[1] = (SpanRingRecord){ .begin_ns = now, .end_ns = now + 10 * 1000000000ULL };
	slot->records[2] = (SpanRingRecord){ .begin_ns = now - 1, .end_ns = now - 2 };
	slot->records[3] = (SpanRingRecord){ .begin_ns = now - 3, .end_ns = now - 2, .stage = 99 };
	atomic_store(&slot->tid, 4242);
	atomic_store(&slot->head, 4);
	atomic_store(&h->slots_claimed, 1);
	CHECK(span_ring_reader_drain(ring.reader, now) == 0, "drain");
	atomic_store(&slot->head, 1);
	atomic_store(&slot->tid, 1); /* a thread cannot change its name */
	CHECK(span_ring_reader_drain(ring.reader, now) == 0, "drain");
	CHECK(span_ring_reader_take_log(ring.reader, &log2) == 0, "take");
	CHECK(log2->stats.spans == 1 && log2->intervals[0].tid == 4242 &&
	      log2->intervals[0].stage == 3, "the good record: %lu kept", log2->stats.spans);
	CHECK(log2->stats.spans_invalid == 3 && log2->stats.ring_errors == 1,
	      "invalid %lu, errors %lu", log2->stats.spans_invalid, log2->stats.ring_errors);
	ring_close(&ring);
}

/*
 * A program that floods its ring: a drain copies at most drain_records (the
 * slots it did not reach come first next time), and once max_spans are kept
 * nothing more is read, only counted.
 */
static void test_flood(void)
{
	_cleanup_(span_log_freep) SpanLog *log = NULL;
	_cleanup_span_ring_reader_ SpanRingReader *reader = NULL;
	SpanRingReaderOptions o = {
		.geometry = { .n_slots = 4, .slot_records = 64 },
		.max_spans = 300,
		.drain_records = 100,
	};
	uint64_t now = span_now_ns();
	SpanRingHeader *h;
	const SpanLogStats *st;
	void *mem;
	int fd;

	CHECK(span_ring_reader_new(&o, &fd, &reader) == 0, "reader");
	mem = mmap(NULL, sizeof(SpanRingHeader) + 4 * (sizeof(SpanRingSlot) + 64 * sizeof(SpanRingRecord)),
		   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(mem != MAP_FAILED, "%m");
	close(fd);
	h = mem;
	for (uint32_t i = 0; i < 4; i++) {
		SpanRingSlot *slot = span_ring_slot(mem, h->slot_offset, h->slot_size, i);

		for (uint32_t k = 0; k < 64; k++)
			slot->records[k] = (SpanRingRecord){ .begin_ns = now - 10, .end_ns = now - 5,
							     .stage = STAGE_DECODE };
		atomic_store(&slot->tid, 100 + i);
		atomic_store(&slot->head, 64);
	}
	atomic_store(&h->slots_claimed, 4);
	/* 256 records waiting, 100 a drain: slots 0 and half of 1, then the rest of 1, 2 and 3 */
	CHECK(span_ring_reader_drain(reader, now) == 0, "drain");
	st = span_ring_reader_stats(reader);
	CHECK(st->spans == 100, "first drain kept %lu, wanted its budget of 100", st->spans);
	CHECK(span_ring_reader_drain(reader, now) == 0, "drain");
	CHECK(span_ring_reader_drain(reader, now) == 0, "drain");
	CHECK(st->spans == 256 && st->spans_lost == 0, "three drains kept %lu, lost %lu", st->spans,
	      st->spans_lost);
	/* a head pushed far ahead: at most the slot is read, the rest counted lost, and past the limit nothing is copied */
	for (uint32_t i = 0; i < 4; i++)
		atomic_store(&span_ring_slot(mem, h->slot_offset, h->slot_size, i)->head, UINT64_MAX / 2);
	for (int i = 0; i < 10; i++)
		CHECK(span_ring_reader_drain(reader, now) == 0, "drain");
	CHECK(span_ring_reader_drain_all(reader, now) == 0, "drain");
	CHECK(st->spans == 300, "kept %lu past a limit of 300", st->spans);
	CHECK(st->spans_over_limit > 0 && st->spans_lost > UINT64_MAX / 4,
	      "over the limit %lu, lost %lu", st->spans_over_limit, st->spans_lost);
	CHECK(span_ring_reader_take_log(reader, &log) == 0 && log->n_intervals == 300,
	      "listed %zu", log ? log->n_intervals : 0);
	munmap(mem, sizeof(SpanRingHeader) + 4 * (sizeof(SpanRingSlot) + 64 * sizeof(SpanRingRecord)));
}

/* A profile with samples on tids 10 and 11 at chosen times, leaf functions by name. */
static Profile *joined_profile(void)
{
	Profile *p = NULL;
	uint32_t names[3], frames[3];
	static const char *const fn[] = { "scan_hot", "decode_hot", "idle" };

	if (profile_new(&p) < 0)
		abort();
	for (int i = 0; i < 3; i++) {
		ProfileFrame f = { .module = PROFILE_NONE, .build_id = PROFILE_NONE, .file = PROFILE_NONE };

		profile_intern_string(p, fn[i], &names[i]);
		f.function = names[i];
		profile_intern_frame(p, &f, &frames[i]);
		profile_intern_stack(p, PROFILE_NONE, frames[i], &frames[i]); /* stack node == i */
	}
	/* tid 10: scan [100, 400] with decode [200, 300] inside; tid 11: decode [100, 200] */
	profile_add_sample(p, 10, 150, frames[0]); /* scan */
	profile_add_sample(p, 10, 250, frames[1]); /* decode (innermost) */
	profile_add_sample(p, 10, 350, frames[0]); /* scan again */
	profile_add_sample(p, 10, 500, frames[2]); /* none */
	profile_add_sample(p, 11, 150, frames[1]); /* decode on the other thread */
	profile_add_sample(p, 11, 250, frames[2]); /* none: tid 10's spans are not tid 11's */
	return p;
}

static void test_join(void)
{
	SpanLog log = {};
	SpanInterval iv[] = {
		{ .begin_ns = 1200, .end_ns = 1300, .tid = 10, .stage = STAGE_DECODE },
		{ .begin_ns = 1100, .end_ns = 1400, .tid = 10, .stage = STAGE_PHASE2_PREFILTER },
		{ .begin_ns = 1100, .end_ns = 1200, .tid = 11, .stage = STAGE_DECODE },
		{ .begin_ns = 500, .end_ns = 900, .tid = 10, .stage = STAGE_ENTROPY }, /* before time 0 */
	};
	_cleanup_profile_ Profile *p = joined_profile(), *back = NULL;
	_cleanup_free_ uint8_t *data = NULL;
	StageJoin j;
	uint32_t stage_key;
	size_t size;
	static const char *const want_stage[] = { "phase2-prefilter", "decode", "phase2-prefilter",
						  NULL, "decode", NULL };
	static const char *const want_state[] = { "created", "scanning", "scanning", "reporting",
						  "created", "scanning" };

	log.intervals = iv;
	log.n_intervals = ELEMENTSOF(iv);
	log.transitions[0] = (SpanTransition){ .time_ns = 1000, .state = RUN_STATE_CREATED };
	log.transitions[1] = (SpanTransition){ .time_ns = 1200, .state = RUN_STATE_SCANNING };
	log.transitions[2] = (SpanTransition){ .time_ns = 1450, .state = RUN_STATE_REPORTING };
	log.n_transitions = 3;

	CHECK(stage_join(p, &log, 1000, &j) == 0, "join");
	CHECK(profile_find_label_key(p, "stage", &stage_key) == 0, "stage label");
	for (size_t i = 0; i < p->n_samples; i++) {
		uint32_t st = profile_sample_label(p, i, 0), state = profile_sample_label(p, i, 1);

		CHECK(want_stage[i] ? st != PROFILE_NONE && strcmp(p->strings[st], want_stage[i]) == 0
				    : st == PROFILE_NONE,
		      "sample %zu: stage %s, want %s", i, st == PROFILE_NONE ? "none" : p->strings[st],
		      want_stage[i] ?: "none");
		CHECK(state != PROFILE_NONE && strcmp(p->strings[state], want_state[i]) == 0,
		      "sample %zu: state %s, want %s", i,
		      state == PROFILE_NONE ? "none" : p->strings[state], want_state[i]);
	}
	CHECK(j.n_samples == 6 && j.stages[STAGE_DECODE].samples == 2 &&
	      j.stages[STAGE_PHASE2_PREFILTER].samples == 2 && j.unstaged.samples == 2,
	      "groups: %lu decode %lu prefilter %lu unstaged", j.stages[STAGE_DECODE].samples,
	      j.stages[STAGE_PHASE2_PREFILTER].samples, j.unstaged.samples);
	CHECK(j.stages[STAGE_DECODE].n_hottest == 1 &&
	      strcmp(p->strings[j.stages[STAGE_DECODE].hottest[0].function], "decode_hot") == 0 &&
	      j.stages[STAGE_DECODE].hottest[0].samples == 2, "decode's hottest function");
	CHECK(j.n_states == 3 && j.states[1].samples == 3 && j.states[0].samples == 2 &&
	      j.states[2].samples == 1, "states %lu %lu %lu", j.states[0].samples, j.states[1].samples,
	      j.states[2].samples);
	/* the span that ended before the window is no marker; the others are, in window time */
	CHECK(p->n_markers == 3 && j.markers == 3, "%u markers", p->n_markers);
	CHECK(p->markers[1].start_ns == 100 && p->markers[1].end_ns == 400 && p->markers[1].tid == 10,
	      "marker 1 at %lu..%lu", p->markers[1].start_ns, p->markers[1].end_ns);
	CHECK(stage_join(p, &log, 1000, &j) == -EBUSY, "a second join");

	/* labels and markers survive the profile file */
	CHECK(profile_file_serialise(p, &data, &size) == 0, "serialise");
	CHECK(profile_file_parse(data, size, &back) == 0, "parse");
	if (back) {
		CHECK(back->n_label_keys == 2 && back->n_markers == 3 && back->n_samples == 6,
		      "read back: %u keys %u markers", back->n_label_keys, back->n_markers);
		for (size_t i = 0; i < back->n_samples && back->n_label_keys == 2; i++) {
			uint32_t a = profile_sample_label(p, i, 0), b = profile_sample_label(back, i, 0);

			CHECK((a == PROFILE_NONE) == (b == PROFILE_NONE) &&
			      (a == PROFILE_NONE || strcmp(p->strings[a], back->strings[b]) == 0),
			      "sample %zu's stage read back", i);
		}
		CHECK(profile_keep_labelled(back, "stage", "decode") == 0, "filter");
		CHECK(back->n_samples == 2 && back->n_markers == 2, "decode: %zu samples %u markers",
		      back->n_samples, back->n_markers);
		CHECK(profile_keep_labelled(back, "colour", "red") == -ENOENT, "an unknown key");
	}
	/* a damaged label section is refused */
	if (data && size > 40) {
		for (size_t cut = 8; cut < size; cut += 7) {
			_cleanup_profile_ Profile *bad = NULL;
			uint8_t saved = data[cut];

			data[cut] ^= 0x5a;
			CHECK(profile_file_parse(data, size, &bad) == -EBADMSG, "damage at %zu accepted", cut);
			data[cut] = saved;
		}
	}
}

/* xorshift64: the same spans and samples every run */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The innermost span of 'tid' at 't' by a scan of all of them (latest begun, then shortest), or -1. */
static ssize_t innermost_by_scan(const SpanLog *log, uint32_t tid, uint64_t t)
{
	ssize_t best = -1;

	for (size_t k = 0; k < log->n_intervals; k++) {
		const SpanInterval *iv = &log->intervals[k];

		if (iv->tid != tid || iv->begin_ns > t || iv->end_ns < t)
			continue;
		if (best < 0 || iv->begin_ns > log->intervals[best].begin_ns ||
		    (iv->begin_ns == log->intervals[best].begin_ns &&
		     iv->end_ns < log->intervals[best].end_ns))
			best = (ssize_t)k;
	}
	return best;
}

/*
 * Stages back to back on three threads (some nested in a span of the whole
 * chunk, some with gaps), the spans in no order, samples anywhere (on a
 * boundary too) in no order: each sample gets the stage a scan of every span
 * gives it.
 */
static void test_join_matches_scan(void)
{
	static const uint32_t tids[] = { 30, 7, 12 };
	_cleanup_profile_ Profile *p = NULL;
	_cleanup_free_ SpanInterval *iv = NULL;
	uint32_t names[_STAGE_MAX];
	uint64_t x = 0x2545f4914f6cdd1dULL, per_stage[_STAGE_MAX] = {}, unstaged = 0;
	SpanLog log = {};
	StageJoin j;
	size_t mismatches = 0;

	iv = calloc(ELEMENTSOF(tids) * 40 * 5, sizeof(*iv));
	CHECK(iv && profile_new(&p) == 0, "allocation");
	if (!iv || !p)
		return;
	for (size_t t = 0; t < ELEMENTSOF(tids); t++) {
		uint64_t now = 1000000 + next_random(&x) % 1000;

		for (int c = 0; c < 40; c++) {
			uint64_t chunk_begin = now;

			for (Stage s = STAGE_SOURCE_READ; s < STAGE_SOURCE_READ + 4; s++) {
				uint64_t d = 1 + next_random(&x) % 500;

				iv[log.n_intervals++] = (SpanInterval){ .begin_ns = now, .end_ns = now + d,
									.tid = tids[t], .stage = s };
				now += d + (next_random(&x) % 3 == 0 ? next_random(&x) % 50 : 0);
			}
			if (next_random(&x) % 2)
				iv[log.n_intervals++] = (SpanInterval){ .begin_ns = chunk_begin, .end_ns = now,
									.tid = tids[t], .stage = STAGE_DECODE };
		}
	}
	for (size_t i = log.n_intervals; i > 1; i--) {
		size_t k = next_random(&x) % i;
		SpanInterval swap = iv[i - 1];

		iv[i - 1] = iv[k];
		iv[k] = swap;
	}
	log.intervals = iv;
	for (int i = 0; i < 3000; i++) {
		const SpanInterval *at = &iv[next_random(&x) % log.n_intervals];
		uint64_t r = next_random(&x) % 8, t = r == 0 ? at->begin_ns : r == 1 ? at->end_ns
						   : at->begin_ns + next_random(&x) % (at->end_ns - at->begin_ns + 60);

		CHECK(profile_add_sample(p, at->tid, t - 1000, PROFILE_NONE) == 0, "sample");
	}
	CHECK(stage_join(p, &log, 1000, &j) == 0, "join");
	for (Stage s = 0; s < _STAGE_MAX; s++)
		profile_intern_string(p, stage_to_string(s), &names[s]);
	for (size_t i = 0; i < p->n_samples; i++) {
		ssize_t k = innermost_by_scan(&log, p->samples[i].tid, 1000 + p->samples[i].time_ns);

		if (k < 0)
			unstaged++;
		else
			per_stage[iv[k].stage]++;
		mismatches += profile_sample_label(p, i, 0) != (k < 0 ? PROFILE_NONE : names[iv[k].stage]);
	}
	CHECK(mismatches == 0, "%zu of %zu samples labelled unlike a scan of the spans", mismatches,
	      p->n_samples);
	CHECK(j.unstaged.samples == unstaged && unstaged > 0, "%lu unstaged, the scan says %lu",
	      j.unstaged.samples, unstaged);
	for (Stage s = 0; s < _STAGE_MAX; s++)
		CHECK(j.stages[s].samples == per_stage[s], "stage %s: %lu samples, the scan says %lu",
		      stage_to_string(s), j.stages[s].samples, per_stage[s]);
}

int main(void)
{
	test_session_into_ring();
	test_flood();
	test_reader_behind();
	test_slots_exhausted();
	test_fork();
	test_hostile_ring();
	test_join();
	test_join_matches_scan();
	return test_result();
}
