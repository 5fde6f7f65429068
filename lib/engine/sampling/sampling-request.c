/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sampling-request.h"

int sampling_request_clamp(const SamplingOptions *o, SamplingRequest *ret)
{
	uint64_t max_duration = o->max_duration_nanos ? o->max_duration_nanos
						      : SAMPLING_DEFAULT_MAX_DURATION_NANOS;
	SamplingRequest q;
	uint32_t max_hz;
	int r;

	r = sampling_max_hz(&max_hz);
	if (r < 0)
		return r;
	q.requested_hz = o->hz ? o->hz : SAMPLING_DEFAULT_HZ;
	q.hz = q.requested_hz > max_hz ? max_hz : q.requested_hz;
	q.requested_duration = o->duration_nanos ? o->duration_nanos : SAMPLING_DEFAULT_DURATION_NANOS;
	q.duration = q.requested_duration > max_duration ? max_duration : q.requested_duration;
	q.clamped = q.hz != q.requested_hz || q.duration != q.requested_duration;
	*ret = q;
	return 0;
}
