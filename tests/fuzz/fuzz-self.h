/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * For fuzz targets that unwind through real code: the fuzzer's own address
 * space, its first executable mapping (its text, with real CFI), and a
 * sample of this process to fill in.
 */

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf-sample.h"
#include "process-maps.h"

#define FUZZ_N_REGS 20 /* popcount of PERF_SAMPLE_REGS_USER_MASK */

static inline void fuzz_self_text(ProcessMaps **ret_maps, uint64_t *ret_start, uint64_t *ret_size)
{
	ProcessMaps *maps;

	if (process_maps_load((uint32_t)getpid(), &maps) < 0)
		abort();
	*ret_start = *ret_size = 0;
	for (size_t i = 0; i < maps->n_mappings; i++)
		if (maps->mappings[i].prot & PROT_EXEC) {
			*ret_start = maps->mappings[i].start;
			*ret_size = maps->mappings[i].end - maps->mappings[i].start;
			break;
		}
	*ret_maps = maps;
}

/* A 64-bit user sample of this process with registers 'regs' (perf order) and nothing else. */
static inline PerfSample fuzz_self_sample(uint64_t regs[FUZZ_N_REGS])
{
	return (PerfSample){
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)getpid(),
		.regs_abi = 2, /* PERF_SAMPLE_REGS_ABI_64 */
		.regs_mask = PERF_SAMPLE_REGS_USER_MASK,
		.n_regs = FUZZ_N_REGS,
		.regs = regs,
	};
}
