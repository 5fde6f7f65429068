/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Throughput of the record library on valid/full.json: parse, serialise
 * (pretty and compact) and render_text. Medians over RUNS runs, in thread
 * CPU time.
 * Usage: bench-record-json FIXTURES_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "record.h"

#define RUNS 7
#define ITERATIONS 2000

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

static char *json;
static size_t json_len;
static RunProfile *profile;

static void parse_once(void)
{
	RunProfile *p = NULL;

	if (record_parse(json, json_len, &p, NULL) < 0)
		abort();
	run_profile_free(p);
}

static void serialise_pretty_once(void)
{
	char *out = NULL;

	if (record_serialise(profile, true, &out) < 0)
		abort();
	free(out);
}

static void serialise_compact_once(void)
{
	char *out = NULL;

	if (record_serialise(profile, false, &out) < 0)
		abort();
	free(out);
}

static void render_once(void)
{
	char *out = NULL;

	if (record_render_text(profile, &out) < 0)
		abort();
	free(out);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

/* Median thread-CPU microseconds per call. */
static double measure(void (*once)(void))
{
	double us[RUNS];

	for (int i = 0; i < ITERATIONS / 10; i++)
		once();
	for (int r = 0; r < RUNS; r++) {
		uint64_t start = cpu_ns();

		for (int i = 0; i < ITERATIONS; i++)
			once();
		us[r] = (double) (cpu_ns() - start) / ITERATIONS / 1000.0;
	}
	qsort(us, RUNS, sizeof(*us), compare_double);
	return us[RUNS / 2];
}

static void report(const char *what, double us)
{
	printf("  %-20s %8.2f us  %7.1f MB/s (of %zu bytes of JSON)\n", what, us,
	       (double) json_len / us, json_len);
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	size_t size = 1 << 16;

	if (argc != 2 || asprintf(&path, "%s/valid/full.json", argv[1]) < 0) {
		fprintf(stderr, "usage: bench-record-json FIXTURES_DIR\n");
		return 2;
	}
	f = fopen(path, "re");
	json = malloc(size);
	if (!f || !json) {
		fprintf(stderr, "bench-record-json: cannot read '%s': %m\n", path);
		return 1;
	}
	json_len = fread(json, 1, size, f);
	if (record_parse(json, json_len, &profile, NULL) < 0) {
		fprintf(stderr, "bench-record-json: '%s' does not parse\n", path);
		return 1;
	}

	printf("valid/full.json, medians of %d runs of %d calls\n", RUNS, ITERATIONS);
	report("parse", measure(parse_once));
	report("serialise pretty", measure(serialise_pretty_once));
	report("serialise compact", measure(serialise_compact_once));
	report("render_text", measure(render_once));
	run_profile_free(profile);
	free(json);
	return 0;
}
