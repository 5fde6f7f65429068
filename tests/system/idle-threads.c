/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idle-threads THREADS [SECONDS]: THREADS threads that only wait, and the main
 * thread spinning in idle_threads_spin() until SECONDS (default 60) of wall
 * time have passed. A target whose session needs many file descriptors (one
 * perf event per thread and CPU) but costs the machine one CPU at most
 * (test-limits.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

static volatile uint64_t sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;

static void *idle_thread(void *arg)
{
	pthread_mutex_lock(&lock);
	for (;;) /* never signalled: exit() ends the process */
		pthread_cond_wait(&done, &lock);
	return arg;
}

static __attribute__((noinline)) void idle_threads_spin(uint64_t until)
{
	uint64_t x = 3;

	while (workload_now_ns() < until)
		for (int i = 0; i < 256; i++)
			x = workload_mix(x + (uint64_t)i);
	sink = x;
}

int main(int argc, char **argv)
{
	uint64_t end = workload_now_ns() + (uint64_t)(workload_seconds(argc, argv, 2, 60) * 1e9);
	long threads = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	pthread_attr_t attr;

	if (threads <= 0 || threads > 100000) {
		fprintf(stderr, "usage: idle-threads THREADS [SECONDS]\n");
		return 2;
	}
	/* small stacks: thousands of threads, little memory */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < threads; i++) {
		pthread_t t;
		int r = pthread_create(&t, &attr, idle_thread, NULL);

		if (r != 0) {
			fprintf(stderr, "idle-threads: cannot start thread %ld: %s\n", i + 1, strerror(r));
			return 1;
		}
	}
	idle_threads_spin(end);
	return 0;
}
