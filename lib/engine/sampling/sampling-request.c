/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sampling-request.h"

#include "time-util.h"

int sampling_request_clamp(const SamplingOptions *o, SamplingRequest *ret)
{
	uint64_t max_duration = o->max_duration_nanos ? o->max_duration_nanos
						      : SAMPLING_DEFAULT_MAX_DURATION_NANOS;
	uint64_t duration = o->duration_nanos ? o->duration_nanos : SAMPLING_DEFAULT_DURATION_NANOS;
	uint32_t hz = o->hz ? o->hz : SAMPLING_DEFAULT_HZ, max_hz;
	SamplingRequest q;
	int r;

	r = sampling_max_hz(&max_hz);
	if (r < 0)
		return r;
	q = (SamplingRequest){
		.requested_hz = o->hz,
		.hz = hz > max_hz ? max_hz : hz,
		.requested_duration = o->duration_nanos,
		.duration = duration > max_duration ? max_duration : duration,
	};
	q.clamped = q.hz != hz || q.duration != duration;
	*ret = q;
	return 0;
}

void sampling_request_to_metrics(const SamplingRequest *q, SamplingMetrics *m)
{
	m->hz = q->hz;
	m->clamped = q->clamped;
	m->requested_hz = q->requested_hz;
	m->requested_duration_nanos = q->requested_duration;
	m->effective_duration_nanos = q->duration;
	m->period_nanos = NSEC_PER_SEC / q->hz;
}
