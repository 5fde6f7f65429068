/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sampling-request.h"

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
