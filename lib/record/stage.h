/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The 25 fixed measurement stages of keyhog-profile-v1, in their stable wire
 * order (the enum value is the wire position), and one aggregate measurement.
 */

#include <stdint.h>

typedef enum Stage {
	STAGE_SOURCE_ACQUIRE,
	STAGE_SOURCE_WALK,
	STAGE_SOURCE_READ,
	STAGE_PREPROCESS,
	STAGE_PHASE1_TRIGGERS,
	STAGE_BACKEND_DISPATCH,
	STAGE_HOT_PATTERNS,
	STAGE_CONFIRMED_PATTERNS,
	STAGE_PHASE2_PREFILTER,
	STAGE_PHASE2_KEYWORD_AC,
	STAGE_PHASE2_SHARED_AC,
	STAGE_PHASE2_ANCHORED_VERIFY,
	STAGE_PHASE2_WHOLE_CHUNK,
	STAGE_GENERIC_DETECTION,
	STAGE_ENTROPY,
	STAGE_MACHINE_LEARNING,
	STAGE_DECODE,
	STAGE_SUPPRESSION,
	STAGE_LIVE_VERIFICATION,
	STAGE_REPORTING,
	STAGE_SOURCE_QUEUE_WAIT,
	STAGE_INCREMENTAL_LOOKUP,
	STAGE_BACKEND_SELECT,
	STAGE_RESULT_MERGE,
	STAGE_SCANNER_QUEUE_WAIT,
	_STAGE_MAX,
} Stage;

struct json_t;

typedef struct StageMeasurement {
	Stage stage;
	uint64_t elapsed_ns;
	uint64_t calls;
	uint64_t attributed_ns;
	struct json_t *extra; /* unknown fields of a parsed record, kept; or NULL */
} StageMeasurement;

/* The kebab-case wire name ("source-acquire"), or NULL when out of range. */
const char *stage_to_string(Stage stage);
/* The stage with this exact wire name, or -EINVAL. */
int stage_from_string(const char *name);
