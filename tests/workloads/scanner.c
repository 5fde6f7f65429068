/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-scanner [OPTIONS]: a program instrumented with stage spans, built
 * like a scanner. THREADS threads (default 2) each take CHUNKS chunks through
 * four stages, each stage a span with its own hot function doing a known
 * amount of work per chunk:
 *
 *   source-read  read_hot     1 unit
 *   decode       decode_hot   3 units
 *   phase2-keyword-ac  scan_hot  5 units
 *   reporting    report_hot   1 unit
 *
 * so the stages split the CPU time 1:3:5:1 however a busy machine schedules
 * the threads. Each chunk is scaled by its own factor (scanner-plan.h: chunks
 * of one length would lock onto the sampler's fixed period, and a stage
 * could get no sample at all). Each stage's thread CPU time is measured here too
 * (CLOCK_THREAD_CPUTIME_ID around its span) and printed at the end as
 * "cpu STAGE NANOS" lines, for tests to compare profd's sample shares with.
 * Macro states: acquiring (threads start), scanning, reporting, completed.
 *
 * It opens a live run with profd through libprofd-live when PROFD_LIVE is set
 * (profctl record --stages does that) and prints "live RUN_ID" or
 * "not-live REASON", and "finish RESULT" once profd has its record.
 *
 * Options for the tests: --chunks N, --threads N, --units N (mixing rounds
 * per unit on average, default 2048: about a millisecond), --wait-file PATH (before
 * finishing, wait until PATH exists), --begin-twice (ask for a second live
 * run: profd must refuse it), --scribble (write garbage over its own span
 * ring halfway: profd must survive it, only this run's spans suffer),
 * --no-finish (exit without finishing the run).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profd-live.h"
#include "scanner-plan.h"

/* The mixing step of every hot function, written out in each so none calls (or inlines) another. */
#define MIX(x)                                  \
	do {                                    \
		(x) ^= (x) >> 33;               \
		(x) *= 0xff51afd7ed558ccdULL;   \
		(x) ^= (x) >> 29;               \
	} while (0)

static unsigned n_chunks = 400, n_threads = 2, unit_rounds = 2048;
static bool scribble;
static volatile uint64_t sink;

/*
 * A stage's hot function: MIX over 'rounds' of 256 steps. Distinct seeds keep
 * the compiler from folding the four into one function.
 */
#define HOT_FUNCTION(name, seed)                                        \
	static __attribute__((noinline)) uint64_t name(uint64_t rounds) \
	{                                                               \
		uint64_t x = (seed);                                    \
									\
		for (uint64_t r = 0; r < rounds; r++)                   \
			for (int i = 0; i < 256; i++) {                 \
				x += (uint64_t)i;                       \
				MIX(x);                                 \
			}                                               \
		return x;                                               \
	}

HOT_FUNCTION(read_hot, 11)
HOT_FUNCTION(decode_hot, 23)
HOT_FUNCTION(scan_hot, 37)
HOT_FUNCTION(report_hot, 41)

/* In the order and with the units of scanner-plan.h */
static const struct {
	Stage stage;
	uint64_t (*work)(uint64_t rounds);
} stages[SCANNER_STAGES] = {
	{ STAGE_SOURCE_READ, read_hot },
	{ STAGE_DECODE, decode_hot },
	{ STAGE_PHASE2_KEYWORD_AC, scan_hot },
	{ STAGE_REPORTING, report_hot },
};
#define N_STAGES SCANNER_STAGES

static uint64_t cpu_ns[N_STAGES];
static pthread_mutex_t cpu_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Garbage over the span ring this process maps (its memfd shows in /proc/self/maps). */
static void scribble_ring(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (!strstr(line, "profd-span-ring") || sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		for (unsigned long a = start; a < end; a += 8)
			*(volatile uint64_t *)a = (a * 0x9e3779b97f4a7c15ULL) ^ 0xdeadbeef;
		fprintf(stderr, "scanner: scribbled over %lu bytes of the span ring\n", end - start);
	}
	if (f)
		fclose(f);
}

static void *worker(void *arg)
{
	uint64_t mine[N_STAGES] = {};
	uintptr_t index = (uintptr_t)arg;

	for (unsigned c = 0; c < n_chunks; c++) {
		if (scribble && index == 0 && c == n_chunks / 2)
			scribble_ring();
		for (size_t s = 0; s < N_STAGES; s++) {
			uint64_t t0 = thread_cpu_ns();

			{
				SPAN_SCOPE(stages[s].stage);
				sink += stages[s].work(scanner_stage_rounds((unsigned)index, c,
									    (unsigned)s, unit_rounds));
			}
			mine[s] += thread_cpu_ns() - t0;
		}
	}
	pthread_mutex_lock(&cpu_lock);
	for (size_t s = 0; s < N_STAGES; s++)
		cpu_ns[s] += mine[s];
	pthread_mutex_unlock(&cpu_lock);
	return NULL;
}

static void wait_for_file(const char *path)
{
	while (access(path, F_OK) < 0)
		usleep(10000);
}

int main(int argc, char **argv)
{
	enum { ARG_CHUNKS = 0x100, ARG_THREADS, ARG_UNITS, ARG_WAIT_FILE, ARG_BEGIN_TWICE,
	       ARG_SCRIBBLE, ARG_NO_FINISH };
	static const struct option options[] = {
		{ "chunks", required_argument, NULL, ARG_CHUNKS },
		{ "threads", required_argument, NULL, ARG_THREADS },
		{ "units", required_argument, NULL, ARG_UNITS },
		{ "wait-file", required_argument, NULL, ARG_WAIT_FILE },
		{ "begin-twice", no_argument, NULL, ARG_BEGIN_TWICE },
		{ "scribble", no_argument, NULL, ARG_SCRIBBLE },
		{ "no-finish", no_argument, NULL, ARG_NO_FINISH },
		{}
	};
	const char *wait_file = NULL;
	bool begin_twice = false, finish = true;
	RunProfile *record = NULL;
	SpanSession *session = NULL;
	ProfdLiveRun *live = NULL, *second = NULL;
	pthread_t *threads;
	RunIdentity id;
	int c, r;

	while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
		switch (c) {
		case ARG_CHUNKS:
			n_chunks = (unsigned)atoi(optarg);
			break;
		case ARG_THREADS:
			n_threads = (unsigned)atoi(optarg);
			break;
		case ARG_UNITS:
			unit_rounds = (unsigned)atoi(optarg);
			break;
		case ARG_WAIT_FILE:
			wait_file = optarg;
			break;
		case ARG_BEGIN_TWICE:
			begin_twice = true;
			break;
		case ARG_SCRIBBLE:
			scribble = true;
			break;
		case ARG_NO_FINISH:
			finish = false;
			break;
		default:
			return 2;
		}

	if (run_identity_new("scanner 1.0", "detectors-1", "config-1", "files", "scanner", "auto", &id) < 0 ||
	    span_session_start(&id, &session) < 0) {
		fprintf(stderr, "scanner: cannot start a span session\n");
		return 1;
	}
	r = profd_live_begin(session, NULL, &live);
	if (r < 0) {
		fprintf(stderr, "scanner: %s\n", strerror(-r));
		return 1;
	}
	if (profd_live_is_live(live))
		printf("live %s\n", profd_live_run_id(live));
	else
		printf("not-live %s\n", profd_live_status(live));
	if (begin_twice) {
		r = profd_live_begin(session, NULL, &second);
		printf("second %s\n", r < 0 ? strerror(-r) :
		       profd_live_is_live(second) ? "live" : profd_live_status(second));
		profd_live_free(second);
	}
	fflush(stdout);

	span_session_transition(session, RUN_STATE_ACQUIRING);
	threads = calloc(n_threads, sizeof(*threads));
	for (uintptr_t i = 0; threads && i < n_threads; i++)
		pthread_create(&threads[i], NULL, worker, (void *)i);
	span_session_transition(session, RUN_STATE_SCANNING);
	for (unsigned i = 0; threads && i < n_threads; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	span_session_transition(session, RUN_STATE_REPORTING);
	for (size_t s = 0; s < N_STAGES; s++)
		printf("cpu %s %llu\n", stage_to_string(stages[s].stage), (unsigned long long)cpu_ns[s]);
	fflush(stdout);
	if (wait_file)
		wait_for_file(wait_file);
	if (!finish)
		return 0;

	r = span_session_finish(session, RUN_STATE_COMPLETED, &record);
	if (r < 0) {
		fprintf(stderr, "scanner: cannot finish the span session: %s\n", strerror(-r));
		return 1;
	}
	r = profd_live_finish(live, record);
	printf("finish %s\n", r < 0 ? strerror(-r) : profd_live_is_live(live) ? "stored" : "local");
	profd_live_free(live);
	run_profile_free(record);
	span_session_free(session);
	return r < 0 && r != -ENOENT ? 1 : 0;
}
