/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * The work plan of workload-scanner (scanner.c), shared with the test that
 * checks it against a fixed-period sampler (tests/live/test-stage-shares.c).
 *
 * Each chunk takes the four stages in order with the CPU split 1:3:5:1, and
 * the whole chunk is scaled by a factor of 1/2 to 3/2 drawn per thread and
 * chunk. The scaling is what makes per-stage sample shares meaningful: the
 * kernel's cpu-clock fires every 1/hz of a thread's CPU time exactly, so with
 * chunks of one length a sampler locks onto them. At 199 Hz a chunk of 10.05
 * ms (two periods) puts every sample at the same two places of every chunk,
 * and a stage that lies between them gets no sample at all while its
 * neighbour gets three times its share. Chunks whose lengths vary by about a
 * period move the samples to a new place in every chunk.
 */
#include <stdint.h>

enum { SCANNER_STAGES = 4 };

/* Units of each stage per chunk, in stage order (source-read, decode, phase2-keyword-ac, reporting). */
static const unsigned scanner_stage_units[SCANNER_STAGES] = { 1, 3, 5, 1 };

/* A stage's scale in a chunk, in 1024ths: 512..1535, from a hash of (thread, chunk, stage). */
static inline uint64_t scanner_stage_scale(unsigned thread, unsigned chunk, unsigned stage)
{
	uint64_t x = ((uint64_t)thread << 40 | (uint64_t)chunk << 8 | stage) + 0x9e3779b97f4a7c15ULL;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return 512 + x % 1024;
}

/* Mixing rounds of 'stage' in 'chunk' on 'thread', for 'unit_rounds' rounds a unit on average. */
static inline uint64_t scanner_stage_rounds(unsigned thread, unsigned chunk, unsigned stage,
					    unsigned unit_rounds)
{
	return (uint64_t)scanner_stage_units[stage] * unit_rounds *
	       scanner_stage_scale(thread, chunk, stage) / 1024;
}
