/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * pause_nanos, the time the target did not run because it was sampled. The
 * kernel does not report what a software-event sample costs the sampled
 * thread, so this is an estimate: samples x a per-sample cost measured by
 * `bench-sampling slowdown` (see BENCHMARKS.md, "Sampling engine").
 */

#include "metrics.h"
#include "perf-event.h"

/* Fill pause_nanos, pause_nanos_per_sample and pause_nanos_method from samples_captured. */
void pause_estimate(const PerfEventConfig *config, SamplingMetrics *m);
