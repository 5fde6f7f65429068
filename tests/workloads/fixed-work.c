/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-fixed-work [MILLIONS] [THREADS]: every thread does the same fixed
 * amount of work (MILLIONS x 2^20 mixing rounds, in a call chain a few frames
 * deep), then the program prints its wall time and its CPU time (all
 * threads), in nanoseconds. Profiler overhead shows up as a longer run time
 * for the same work; the CPU time stays meaningful on a busy machine.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spin.h"

static volatile uint64_t sink;
static uint64_t rounds;

static __attribute__((noinline)) uint64_t fixed_leaf(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		x = workload_mix(x + i);
	return x;
}

static __attribute__((noinline)) uint64_t fixed_middle(uint64_t x, uint64_t n)
{
	/* chunks, so a deeper stack is live during most samples */
	for (uint64_t done = 0; done < n; done += 4096)
		x = fixed_leaf(x, 4096);
	return x;
}

static void *fixed_worker(void *arg)
{
	sink += fixed_middle((uint64_t)(uintptr_t)arg, rounds);
	return NULL;
}

int main(int argc, char **argv)
{
	double millions = argc > 1 ? atof(argv[1]) : 200;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t tids[64];
	uint64_t start;

	if (threads < 1 || threads > 64 || millions <= 0) {
		fprintf(stderr, "workload-fixed-work: MILLIONS > 0, THREADS 1..64\n");
		return 2;
	}
	rounds = (uint64_t)(millions * (1 << 20));
	start = workload_now_ns();
	for (int i = 1; i < threads; i++)
		pthread_create(&tids[i], NULL, fixed_worker, (void *)(uintptr_t)i);
	fixed_worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	{
		uint64_t wall = workload_now_ns() - start;
		struct timespec cpu;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
		printf("%llu %llu\n", (unsigned long long)wall,
		       (unsigned long long)cpu.tv_sec * 1000000000ULL + (unsigned long long)cpu.tv_nsec);
	}
	return 0;
}
