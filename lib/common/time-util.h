/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Clock readings as plain integers. */

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL

/* 'clock' now, in nanoseconds (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_THREAD_CPUTIME_ID, ...). */
static inline uint64_t clock_nanos(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* 'clock' now, in microseconds. */
static inline uint64_t clock_micros(clockid_t clock)
{
	return clock_nanos(clock) / 1000;
}
