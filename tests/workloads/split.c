/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-split [SECONDS] [THREADS] [SEED]: every thread spends its CPU time 3:1
 * in split_heavy() and split_light() until SECONDS of wall time have passed.
 * Each call does a fixed amount of work, the heavy one three times the light
 * one's, so the split is 3:1 in CPU time however a busy machine schedules the
 * threads (phases of wall time would lose more of the long ones to
 * preemption). Built -O2 without frame pointers, so only DWARF unwinding
 * recovers the callers.
 *
 * With SEED, each round (a heavy call and a light one, still 3:1) is from half
 * to one and a half times as long, drawn from SEED: a sampler with a fixed
 * period (999 Hz: 1.001 ms) cannot lock in phase with the rounds, as it can
 * with ~4-5 ms rounds of one length on an idle machine, where it then sees
 * every round at the same few points and a share several points off.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

static volatile uint64_t sink;
static double seconds;
static uint64_t seed; /* 0: rounds of one length */

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
	/* xorshift64, a stream of its own for each thread */
	uint64_t state = seed + (uintptr_t)arg, chunks = LIGHT_CHUNKS;

	while (workload_now_ns() < end) {
		if (seed) {
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			chunks = LIGHT_CHUNKS / 2 + state % LIGHT_CHUNKS;
		}
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
	seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 0;
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
