/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-nocfi [SECONDS]: main -> nocfi_caller -> nocfi_middle -> nocfi_leaf,
 * where nocfi_middle has no CFI (nocfi-middle.c). A DWARF walk from
 * nocfi_leaf stops at nocfi_middle, and the stack-quality report says why.
 */
#include "nocfi.h"
#include "spin.h"

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t nocfi_leaf(uint64_t x)
{
	for (int i = 0; i < 64; i++)
		x = workload_mix(x + (uint64_t)i);
	return x;
}

static __attribute__((noinline)) uint64_t nocfi_caller(double seconds)
{
	uint64_t end = workload_now_ns() + (uint64_t)(seconds * 1e9), x = 1;

	while (workload_now_ns() < end)
		x = nocfi_middle(x, 10000);
	return x;
}

int main(int argc, char **argv)
{
	sink = nocfi_caller(workload_seconds(argc, argv, 1, 3.0));
	return 0;
}
