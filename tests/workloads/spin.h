/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * Shared pieces of the test workloads: burn CPU for a while in a way the
 * compiler cannot fold away, and read a monotonic clock.
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t workload_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Always inlined, so unwinders must report it as an inline frame. */
static inline __attribute__((always_inline)) uint64_t workload_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 29;
	return x;
}

/* Seconds from argv[i], or a default. */
static inline double workload_seconds(int argc, char **argv, int i, double def)
{
	extern double atof(const char *);

	return argc > i ? atof(argv[i]) : def;
}

/*
 * Wait until 'path' exists (a test creates it at the moment it wants the workload to go on).
 * Polled: the test may create it before the workload looks, so no signal can be missed.
 */
static inline void workload_wait_for_file(const char *path)
{
	while (access(path, F_OK) < 0)
		usleep(1000);
}
