/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-split [SECONDS] [THREADS]: every thread spends its time 3:1 in
 * split_heavy() and split_light(). Built -O2 without frame pointers, so only
 * DWARF unwinding recovers the callers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

static volatile uint64_t sink;
static double seconds;

/* Spin for a fixed number of nanoseconds of wall time (the machine is otherwise idle). */
static __attribute__((noinline)) uint64_t split_heavy(uint64_t ns)
{
	uint64_t end = workload_now_ns() + ns, x = 1;

	while (workload_now_ns() < end)
		for (int i = 0; i < 256; i++)
			x = workload_mix(x + (uint64_t)i);
	return x;
}

static __attribute__((noinline)) uint64_t split_light(uint64_t ns)
{
	uint64_t end = workload_now_ns() + ns, x = 3;

	while (workload_now_ns() < end)
		for (int i = 0; i < 256; i++)
			x = workload_mix(x ^ (uint64_t)i);
	return x;
}

static void *split_worker(void *arg)
{
	uint64_t end = workload_now_ns() + (uint64_t)(seconds * 1e9);

	while (workload_now_ns() < end) {
		sink += split_heavy(3000000);
		sink += split_light(1000000);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t tids[64];

	seconds = workload_seconds(argc, argv, 1, 3.0);
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "workload-split: thread count must be 1..64\n");
		return 2;
	}
	for (int i = 1; i < threads; i++)
		pthread_create(&tids[i], NULL, split_worker, NULL);
	split_worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
