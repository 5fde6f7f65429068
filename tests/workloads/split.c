/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-split [SECONDS] [THREADS]: every thread spends its CPU time 3:1 in
 * split_heavy() and split_light() until SECONDS of wall time have passed.
 * Each call does a fixed amount of work, the heavy one three times the light
 * one's, so the split is 3:1 in CPU time however a busy machine schedules the
 * threads (phases of wall time would lose more of the long ones to
 * preemption). Built -O2 without frame pointers, so only DWARF unwinding
 * recovers the callers.
 *
 * Each round (a heavy call, then a light one) is from half to one and a half
 * times the usual length, drawn from a fixed seed: a sampler with a fixed
 * period (1.001 ms at 999 Hz, 2.004 ms at 499 Hz) cannot lock in phase with
 * the rounds, as it can with rounds of one length (~4-5 ms) on an idle
 * machine, seeing every round at the same few points and a share many points
 * off 3:1.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

static volatile uint64_t sink;
static double seconds;

/* about 1 ms of CPU time on this project's test machines */
#define LIGHT_CHUNKS 2048

/*
 * 'chunks' rounds of mixing. Each round reads the clock too, as the other
 * workloads' spin loops do, so profiles show the vDSO. The two bodies are the
 * same code (only the seed differs), so a round costs the same in both
 * whatever the compiler and its sanitizers make of it.
 */
static __attribute__((noinline)) uint64_t split_heavy(uint64_t chunks)
{
	uint64_t x = 1;

	for (uint64_t c = 0; c < chunks; c++) {
		x += workload_now_ns();
		for (int i = 0; i < 256; i++)
			x = workload_mix(x + (uint64_t)i);
	}
	return x;
}

static __attribute__((noinline)) uint64_t split_light(uint64_t chunks)
{
	uint64_t x = 3;

	for (uint64_t c = 0; c < chunks; c++) {
		x += workload_now_ns();
		for (int i = 0; i < 256; i++)
			x = workload_mix(x + (uint64_t)i);
	}
	return x;
}

static void *split_worker(void *arg)
{
	uint64_t end = workload_now_ns() + (uint64_t)(seconds * 1e9);
	/* xorshift64 from a fixed seed, a stream of its own for each thread */
	uint64_t state = 1 + (uintptr_t)arg, chunks;

	while (workload_now_ns() < end) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		chunks = LIGHT_CHUNKS / 2 + state % LIGHT_CHUNKS;
		sink += split_heavy(3 * chunks);
		sink += split_light(chunks);
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
		pthread_create(&tids[i], NULL, split_worker, (void *)(uintptr_t)i);
	split_worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
