/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * deep-stack SECONDS DEPTH: recurses DEPTH times through descend(), each frame
 * holding 512 bytes of stack, then spins in deep_leaf(). Deep enough, the
 * stack outgrows the sampled copy and the unwinder must say it was truncated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void deep_leaf(uint64_t until)
{
	uint64_t x = 1;

	while (now_ns() < until)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

static __attribute__((noinline)) uint64_t descend(int depth, uint64_t until)
{
	volatile char frame[512];

	memset((char *)frame, depth, sizeof(frame));
	if (depth > 0)
		sink += descend(depth - 1, until); /* not a tail call: the frame stays */
	else
		deep_leaf(until);
	return frame[depth % sizeof(frame)];
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	int depth = argc > 2 ? atoi(argv[2]) : 8;

	descend(depth, now_ns() + (uint64_t)(seconds * 1e9));
	return 0;
}
