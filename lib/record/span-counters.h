/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Internal: taking and clearing one set of span counters (global or session). */

#include "span.h"

size_t span_counters_take_stages(SpanCounters *c, StageMeasurement ret[static _STAGE_MAX]);
void span_counters_take_input(SpanCounters *c, uint64_t *ret_bytes, uint64_t *ret_units);
void span_counters_reset(SpanCounters *c);
