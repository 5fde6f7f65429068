/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-dlopen PLUGIN [SECONDS] [DELAY]: spins in before_plugin() for DELAY
 * seconds, then dlopens PLUGIN and spends the rest in its plugin_hot().
 */
#include <dlfcn.h>
#include <stdio.h>

#include "spin.h"

static volatile uint64_t sink;

static __attribute__((noinline)) void before_plugin(uint64_t until)
{
	uint64_t x = 13;

	while (workload_now_ns() < until)
		for (int i = 0; i < 256; i++)
			x = workload_mix(x + (uint64_t)i);
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = workload_seconds(argc, argv, 2, 3.0);
	double delay = workload_seconds(argc, argv, 3, 1.0);
	uint64_t start = workload_now_ns(), end = start + (uint64_t)(seconds * 1e9);
	uint64_t (*hot)(uint64_t);
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: workload-dlopen PLUGIN [SECONDS] [DELAY]\n");
		return 2;
	}
	before_plugin(start + (uint64_t)(delay * 1e9));
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "workload-dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&hot = dlsym(h, "plugin_hot");
	if (!hot) {
		fprintf(stderr, "workload-dlopen: %s\n", dlerror());
		return 1;
	}
	while (workload_now_ns() < end)
		sink += hot(1000000);
	return 0;
}
