/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The static counters behind span.h, and reading and clearing them. */
#include <stdalign.h>

#include "span.h"
#include "span-counters.h"

/* The switches are read on every span: keep them off the counters' cache lines. */
alignas(64) SpanSwitches span_switches_;
alignas(64) SpanCounters span_global_counters_;
alignas(64) SpanCounters span_session_counters_;
_Thread_local Attribution span_attribution_ = ATTRIBUTION_ROOT;

void span_set_enabled(bool enabled)
{
	atomic_store_explicit(&span_switches_.enabled, enabled, memory_order_relaxed);
}

Attribution span_set_attribution(Attribution attribution)
{
	Attribution previous = span_attribution_;

	span_attribution_ = attribution;
	return previous;
}

size_t span_counters_take_stages(SpanCounters *c, StageMeasurement ret[static _STAGE_MAX])
{
	size_t n = 0;

	for (Stage s = 0; s < _STAGE_MAX; s++) {
		uint64_t elapsed = atomic_exchange_explicit(&c->elapsed_ns[s], 0, memory_order_relaxed);
		uint64_t calls = atomic_exchange_explicit(&c->calls[s], 0, memory_order_relaxed);
		uint64_t attributed = atomic_exchange_explicit(&c->attributed_ns[s], 0,
							       memory_order_relaxed);

		if (elapsed != 0 || calls != 0 || attributed != 0)
			ret[n++] = (StageMeasurement) {
				.stage = s,
				.elapsed_ns = elapsed,
				.calls = calls,
				.attributed_ns = attributed,
			};
	}
	return n;
}

void span_counters_take_input(SpanCounters *c, uint64_t *ret_bytes, uint64_t *ret_units)
{
	*ret_bytes = atomic_exchange_explicit(&c->input_bytes, 0, memory_order_relaxed);
	*ret_units = atomic_exchange_explicit(&c->input_units, 0, memory_order_relaxed);
}

void span_counters_reset(SpanCounters *c)
{
	StageMeasurement discard[_STAGE_MAX];
	uint64_t bytes, units;

	(void) span_counters_take_stages(c, discard);
	span_counters_take_input(c, &bytes, &units);
}

size_t span_take_stage_measurements(StageMeasurement ret[static _STAGE_MAX])
{
	return span_counters_take_stages(&span_global_counters_, ret);
}

void span_take_input_totals(uint64_t *ret_bytes, uint64_t *ret_units)
{
	span_counters_take_input(&span_global_counters_, ret_bytes, ret_units);
}

void span_reset(void)
{
	span_counters_reset(&span_global_counters_);
}
