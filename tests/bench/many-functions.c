/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * many-functions [SECONDS]: 16384 distinct small functions called in turn.
 * A profile of it touches thousands of code locations and its CFI has
 * thousands of FDEs, so its module weighs something in profd's SymbolCache:
 * bench-long-life profiles 100 copies of it (each with a build-id of its
 * own) over and over to show the cache staying within its cap.
 */
#include <stdint.h>
#include <stdlib.h>

#include "spin.h"

/* 4^7 expansions of M, named by seven base-4 digits */
#define R4(M, n) M(n##0) M(n##1) M(n##2) M(n##3)
#define R16(M, n) R4(M, n##0) R4(M, n##1) R4(M, n##2) R4(M, n##3)
#define R64(M, n) R16(M, n##0) R16(M, n##1) R16(M, n##2) R16(M, n##3)
#define R256(M, n) R64(M, n##0) R64(M, n##1) R64(M, n##2) R64(M, n##3)
#define R1024(M, n) R256(M, n##0) R256(M, n##1) R256(M, n##2) R256(M, n##3)
#define R4096(M, n) R1024(M, n##0) R1024(M, n##1) R1024(M, n##2) R1024(M, n##3)
#define R16384(M, n) R4096(M, n##0) R4096(M, n##1) R4096(M, n##2) R4096(M, n##3)

/* each with its own constant, so no two are folded together */
#define DEFINE(n)                                                  \
	static __attribute__((noinline)) uint64_t f##n(uint64_t x) \
	{                                                          \
		for (int i = 0; i < 8; i++)                        \
			x = workload_mix(x + i + __COUNTER__);     \
		return x;                                          \
	}
#define ENTRY(n) f##n,

R16384(DEFINE, f)

static uint64_t (*const functions[])(uint64_t) = { R16384(ENTRY, f) };

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	uint64_t end = workload_now_ns() + (uint64_t)(workload_seconds(argc, argv, 1, 1.0) * 1e9);
	uint64_t x = 1;

	while (workload_now_ns() < end)
		for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
			x = functions[i](x);
	sink = x;
	return 0;
}
