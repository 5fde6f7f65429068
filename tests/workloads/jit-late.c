/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-jit-late [SECONDS]: a JIT that keeps emitting code while it is
 * profiled. Every 100 ms it maps a new page of executable memory on one CPU,
 * announces it in /tmp/perf-<pid>.map as jit_late_loop, and runs it on
 * another CPU: the MMAP2 record of the page goes to the first CPU's ring, the
 * samples taken in it to the second's. A profiler that handles the rings one
 * after the other sees those samples before it knows the page is mapped.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spin.h"

/* x86-64: mov $0x100000,%ecx; 1: dec %ecx; jnz 1b; ret */
static const unsigned char spin_code[] = {
	0xb9, 0x00, 0x00, 0x10, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3,
};

/* Run on 'cpu' from now on (-1: anywhere allowed). */
static void run_on(int cpu, const cpu_set_t *allowed)
{
	cpu_set_t one;

	if (cpu < 0) {
		sched_setaffinity(0, sizeof(*allowed), allowed);
		return;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

int main(int argc, char **argv)
{
	double seconds = workload_seconds(argc, argv, 1, 3.0);
	uint64_t end = workload_now_ns() + (uint64_t)(seconds * 1e9);
	int map_cpu = -1, run_cpu = -1;
	cpu_set_t allowed;
	char path[64];

	/* the first and the last CPU allowed; with one CPU, no rings to mix up */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 1)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed)) {
				if (run_cpu < 0)
					run_cpu = c;
				map_cpu = c;
			}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	while (workload_now_ns() < end) {
		uint64_t round_end = workload_now_ns() + 100 * 1000000ULL;
		void (*spin)(void);
		unsigned char *code;
		FILE *map;

		run_on(map_cpu, &allowed);
		code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (code == MAP_FAILED)
			return 1;
		memcpy(code, spin_code, sizeof(spin_code));
		map = fopen(path, "ae");
		if (!map)
			return 1;
		fprintf(map, "%lx %zx jit_late_loop\n", (unsigned long)code, sizeof(spin_code));
		fclose(map);
		run_on(run_cpu, &allowed);
		*(void **)&spin = code;
		while (workload_now_ns() < round_end)
			spin();
	}
	unlink(path);
	return 0;
}
