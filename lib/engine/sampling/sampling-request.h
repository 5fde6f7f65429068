/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A session's request after the bounds of DESIGN.md §3: hz clamped to
 * [1, max_hz], the duration to the operator's ceiling, defaults filled in.
 * Clamped, never refused; both values are reported, the request as given
 * (0: the default). Every backend starts here.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sampling-session.h"

typedef struct SamplingRequest {
	uint32_t hz, requested_hz;
	uint64_t duration, requested_duration; /* nanoseconds */
	bool clamped;
} SamplingRequest;

int sampling_request_clamp(const SamplingOptions *options, SamplingRequest *ret);
/* The request's part of a backend's metrics: hz, clamped, requested and effective, period. */
void sampling_request_to_metrics(const SamplingRequest *q, SamplingMetrics *m);
