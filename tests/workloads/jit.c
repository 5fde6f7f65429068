/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-jit [SECONDS] [nomap]: copies a small spin loop into anonymous
 * executable memory, announces it in /tmp/perf-<pid>.map as jit_spin_loop
 * (the perf JIT convention; not with "nomap", a JIT without a map) and spends
 * its time there.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spin.h"

/* x86-64: mov $0x100000,%ecx; 1: dec %ecx; jnz 1b; ret */
static const unsigned char spin_code[] = {
	0xb9, 0x00, 0x00, 0x10, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3,
};

int main(int argc, char **argv)
{
	double seconds = workload_seconds(argc, argv, 1, 3.0);
	bool with_map = !(argc > 2 && strcmp(argv[2], "nomap") == 0);
	uint64_t end = workload_now_ns() + (uint64_t)(seconds * 1e9);
	char path[64];
	void (*spin)(void);
	FILE *map;
	void *code;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, spin_code, sizeof(spin_code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	if (!with_map)
		path[0] = '\0';
	else {
		map = fopen(path, "we");
		if (!map)
			return 1;
		fprintf(map, "%lx %zx jit_spin_loop\n", (unsigned long)code, sizeof(spin_code));
		fclose(map);
	}
	*(void **)&spin = code;
	while (workload_now_ns() < end)
		spin();
	if (with_map)
		unlink(path);
	return 0;
}
