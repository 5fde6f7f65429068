/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cost of a stage span: disabled, enabled, enabled inside a session, inside a
 * session that is a live run (each span also written into a span ring, as
 * profd hands one over), against an empty loop iteration and two
 * clock_gettime(CLOCK_MONOTONIC) calls.
 * Each figure is the median over RUNS interleaved runs, in thread CPU time so
 * that time spent descheduled on a busy machine does not count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cleanup.h"
#include "record.h"
#include "span-ring.h"
#include "span.h"

#define RUNS 9
#define ITERATIONS 5000000

/* Keeps a loop body from being optimised away without costing an instruction. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

static void empty_loop(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		BARRIER();
}

static void span_loop(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		Span s = span_begin(STAGE_DECODE);
		BARRIER();
		span_end(&s);
	}
}

static void clock_pair_loop(unsigned n)
{
	struct timespec a, b;

	for (unsigned i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		BARRIER();
		clock_gettime(CLOCK_MONOTONIC, &b);
	}
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

static SpanSession *session;

static void spans_off(bool on)
{
	(void) on;
	span_set_enabled(false);
}

static void session_on(bool on)
{
	RunIdentity id;

	if (!on) {
		session = span_session_free(session);
		return;
	}
	if (run_identity_new("bench", "", "", "bench", "bench", "none", &id) < 0 ||
	    span_session_start(&id, &session) < 0) {
		fprintf(stderr, "bench-span: cannot start a span session\n");
		exit(1);
	}
}

static void spans_on(bool on)
{
	span_set_enabled(on);
}

/*
 * A session in a live run: its ring laid out as profd makes it (here in
 * anonymous memory: the writes are the same; profd reading the shared pages
 * every 100 ms adds nothing measurable per span). The ring wraps, as it does
 * between two of profd's drains.
 */
static void live_on(bool on)
{
	static const SpanRingGeometry g = { .n_slots = 4, .slot_records = 8192 };
	static void *ring;
	static size_t size;

	session_on(on);
	if (!on)
		return;
	if (!ring) {
		if (span_ring_geometry_size(&g, &size) < 0)
			abort();
		ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (ring == MAP_FAILED)
			abort();
	}
	memset(ring, 0, size);
	span_ring_header_init(ring, &g);
	if (span_session_attach_ring(session, ring, size) < 0) {
		fprintf(stderr, "bench-span: cannot attach a span ring\n");
		exit(1);
	}
}

static const struct {
	const char *name;
	void (*loop)(unsigned n);
	void (*setup)(bool on);
	unsigned n;
} cases[] = {
	{ "empty loop iteration", empty_loop, spans_off, ITERATIONS },
	{ "disabled span", span_loop, spans_off, ITERATIONS },
	{ "two clock_gettime(MONOTONIC)", clock_pair_loop, spans_off, ITERATIONS / 10 },
	{ "enabled span, no session", span_loop, spans_on, ITERATIONS / 10 },
	{ "enabled span, in a session", span_loop, session_on, ITERATIONS / 10 },
	{ "enabled span, in a live run", span_loop, live_on, ITERATIONS / 10 },
};

int main(void)
{
	double ns[ELEMENTSOF(cases)][RUNS], median[ELEMENTSOF(cases)];

	/* interleaved rounds, so load from other processes hits every case alike */
	for (int r = -1; r < RUNS; r++)
		for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
			uint64_t start;

			cases[c].setup(true);
			start = cpu_ns();
			cases[c].loop(cases[c].n);
			if (r >= 0) /* round -1 warms up */
				ns[c][r] = (double) (cpu_ns() - start) / cases[c].n;
			cases[c].setup(false);
		}
	for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
		qsort(ns[c], RUNS, sizeof(double), compare_double);
		median[c] = ns[c][RUNS / 2];
	}

	printf("thread CPU ns per iteration, medians of %d interleaved runs\n", RUNS);
	for (size_t c = 0; c < ELEMENTSOF(cases); c++)
		printf("  %-30s %7.2f\n", cases[c].name, median[c]);
	printf("disabled span - empty loop:              %+.2f ns\n", median[1] - median[0]);
	printf("enabled span - two clock_gettime:        %+.2f ns\n", median[3] - median[2]);
	printf("session span - two clock_gettime:        %+.2f ns\n", median[4] - median[2]);
	printf("live-run span - session span:            %+.2f ns\n", median[5] - median[4]);
	return 0;
}
