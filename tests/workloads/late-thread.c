/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-late-thread [SECONDS] [DELAY]: the main thread spins; after DELAY
 * seconds a second thread starts and spins in late_thread_spin() until the end.
 */
#include <pthread.h>
#include <stdlib.h>

#include "spin.h"

static volatile uint64_t sink;
static uint64_t end_ns;

static __attribute__((noinline)) void late_thread_spin(void)
{
	uint64_t x = 5;

	while (workload_now_ns() < end_ns)
		for (int i = 0; i < 256; i++)
			x = workload_mix(x + (uint64_t)i);
	sink = x;
}

static void *late_thread_main(void *arg)
{
	late_thread_spin();
	return arg;
}

static __attribute__((noinline)) void main_thread_spin(uint64_t until)
{
	uint64_t x = 7;

	while (workload_now_ns() < until)
		for (int i = 0; i < 256; i++)
			x = workload_mix(x ^ (uint64_t)i);
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = workload_seconds(argc, argv, 1, 3.0);
	double delay = workload_seconds(argc, argv, 2, 1.0);
	uint64_t start = workload_now_ns();
	pthread_t t;

	end_ns = start + (uint64_t)(seconds * 1e9);
	main_thread_spin(start + (uint64_t)(delay * 1e9));
	pthread_create(&t, NULL, late_thread_main, NULL);
	main_thread_spin(end_ns);
	pthread_join(t, NULL);
	return 0;
}
