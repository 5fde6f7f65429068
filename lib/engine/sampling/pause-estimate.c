/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pause-estimate.h"

/*
 * Measured on the reference VM (2 vCPU, kernel 6.x): slowdown of a fixed
 * amount of work under sampling, divided by the samples taken. A sample costs
 * a fixed part (interrupt, callchain, record) and, in DWARF mode, the copy of
 * the user stack, which grows with stack_bytes.
 */
#define PAUSE_BASE_NANOS 2000ULL
#define PAUSE_STACK_NANOS_PER_KIB 250ULL

void pause_estimate(const PerfEventConfig *config, SamplingMetrics *m)
{
	uint64_t per_sample = PAUSE_BASE_NANOS;

	if (config->dwarf)
		per_sample += PAUSE_STACK_NANOS_PER_KIB * config->stack_bytes / 1024;
	m->pause_nanos_per_sample = per_sample;
	m->pause_nanos = m->samples_captured * per_sample;
	m->pause_nanos_method = "estimate: samples_captured x pause_nanos_per_sample, "
				"the per-sample slowdown measured by bench-sampling-overhead";
}
