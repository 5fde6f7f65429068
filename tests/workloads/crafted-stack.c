/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-crafted-stack [SECONDS]: a hostile target for the unwinder. It
 * fills a buffer with values made to look like return addresses (into its
 * own code and libc's, odd, kernel-like, pointing back into the buffer so a
 * walk loops, huge), points its stack pointer into it and spins there, so
 * every sample's registers and stack copy are crafted. It never returns; an
 * alarm ends it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "spin.h"

static uint64_t crafted[16384] __attribute__((aligned(64)));

int main(int argc, char **argv)
{
	double seconds = workload_seconds(argc, argv, 1, 10.0);
	uint64_t own = (uint64_t)(uintptr_t)&main, libc = (uint64_t)(uintptr_t)&printf;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (size_t i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++) {
		x = workload_mix(x + i);
		switch (x % 8) {
		case 0: crafted[i] = own + x % 4096; break;
		case 1: crafted[i] = libc + x % 65536; break;
		case 2: crafted[i] = (uint64_t)(uintptr_t)&crafted[x % 16384]; break;
		case 3: crafted[i] = 0xffffffff81000000ULL + x % (1 << 24); break;
		case 4: crafted[i] = x | 1; break;
		case 5: crafted[i] = own - 1; break;
		case 6: crafted[i] = 0; break;
		default: crafted[i] = x; break;
		}
	}
	alarm((unsigned)(seconds + 1));
	/* the stack pointer and frame pointer into the crafted values, then spin for ever */
	__asm__ volatile("mov %0, %%rsp\n\t"
			 "mov %1, %%rbp\n"
			 "1: jmp 1b\n"
			 :
			 : "r"(&crafted[8192]), "r"(&crafted[9000])
			 : "memory");
	return 0;
}
