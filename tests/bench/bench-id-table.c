/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hash table (lib/common/id-table.h) where the engine uses it: id_map_intern()
 * (the exports' (parent, function) and pprof keys) and profile_intern_string()
 * (the profile's strings), on 1 000 000 operations over 100 000 distinct keys
 * drawn with a skew (a few hot keys, a long tail, as stacks are). Reference,
 * measured in the same run: the same stream looked up in a plain array
 * indexed by the key's position (a perfect hash: the memory traffic alone).
 * Median of RUNS runs of thread CPU time, ns per operation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "id-map.h"
#include "profile.h"
#include "time-util.h"

#define RUNS 7
#define OPS 1000000
#define DISTINCT 100000

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static uint64_t keys[DISTINCT];
static char *strings[DISTINCT];
static uint32_t stream[OPS]; /* positions into keys/strings */
static uint32_t dense[DISTINCT];
static volatile uint64_t sink;

static void run_direct(void)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < OPS; i++)
		sum += dense[stream[i]];
	sink = sum;
}

static void run_id_map(void)
{
	_cleanup_(id_map_freep) IdMap *m = NULL;
	uint64_t sum = 0;

	if (id_map_new(64, &m) < 0)
		abort();
	for (size_t i = 0; i < OPS; i++) {
		uint32_t id;

		if (id_map_intern(m, keys[stream[i]], &id, NULL) < 0)
			abort();
		sum += id;
	}
	sink = sum;
}

static void run_strings(void)
{
	_cleanup_profile_ Profile *p = NULL;
	uint64_t sum = 0;

	if (profile_new(&p) < 0)
		abort();
	for (size_t i = 0; i < OPS; i++) {
		uint32_t id;

		if (profile_intern_string(p, strings[stream[i]], &id) < 0)
			abort();
		sum += id;
	}
	sink = sum;
}

static double measure(void (*run)(void))
{
	double ns[RUNS];

	run();
	for (int r = 0; r < RUNS; r++) {
		uint64_t start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);

		run();
		ns[r] = (double)(clock_nanos(CLOCK_THREAD_CPUTIME_ID) - start) / OPS;
	}
	qsort(ns, RUNS, sizeof(double), compare_double);
	return ns[RUNS / 2];
}

int main(void)
{
	double direct, map, str;

	for (size_t i = 0; i < DISTINCT; i++) {
		keys[i] = id_map_key((uint32_t)rng(), (uint32_t)rng());
		dense[i] = (uint32_t)i;
		if (asprintf(&strings[i], "function_%016llx", (unsigned long long)rng()) < 0)
			abort();
	}
	/* skewed: the square of a uniform draw favours low positions */
	for (size_t i = 0; i < OPS; i++) {
		double u = (double)(rng() >> 11) / (double)(1ULL << 53);

		stream[i] = (uint32_t)(u * u * DISTINCT);
	}

	direct = measure(run_direct);
	map = measure(run_id_map);
	str = measure(run_strings);
	printf("%d operations over %d distinct keys, medians of %d runs, thread CPU\n", OPS,
	       DISTINCT, RUNS);
	printf("  direct array (reference) %7.2f ns/op\n", direct);
	printf("  id_map_intern            %7.2f ns/op  (x%.1f the reference)\n", map, map / direct);
	printf("  profile_intern_string    %7.2f ns/op  (x%.1f the reference)\n", str, str / direct);
	for (size_t i = 0; i < DISTINCT; i++)
		free(strings[i]);
	return 0;
}
