/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Wire names of the record's enums (serde kebab-case), stages in wire order. */
#include <errno.h>
#include <string.h>

#include "cleanup.h"
#include "record-fields.h"
#include "record.h"
#include "stage.h"

static const char *const stage_names[_STAGE_MAX] = {
	[STAGE_SOURCE_ACQUIRE] = "source-acquire",
	[STAGE_SOURCE_WALK] = "source-walk",
	[STAGE_SOURCE_READ] = "source-read",
	[STAGE_PREPROCESS] = "preprocess",
	[STAGE_PHASE1_TRIGGERS] = "phase1-triggers",
	[STAGE_BACKEND_DISPATCH] = "backend-dispatch",
	[STAGE_HOT_PATTERNS] = "hot-patterns",
	[STAGE_CONFIRMED_PATTERNS] = "confirmed-patterns",
	[STAGE_PHASE2_PREFILTER] = "phase2-prefilter",
	[STAGE_PHASE2_KEYWORD_AC] = "phase2-keyword-ac",
	[STAGE_PHASE2_SHARED_AC] = "phase2-shared-ac",
	[STAGE_PHASE2_ANCHORED_VERIFY] = "phase2-anchored-verify",
	[STAGE_PHASE2_WHOLE_CHUNK] = "phase2-whole-chunk",
	[STAGE_GENERIC_DETECTION] = "generic-detection",
	[STAGE_ENTROPY] = "entropy",
	[STAGE_MACHINE_LEARNING] = "machine-learning",
	[STAGE_DECODE] = "decode",
	[STAGE_SUPPRESSION] = "suppression",
	[STAGE_LIVE_VERIFICATION] = "live-verification",
	[STAGE_REPORTING] = "reporting",
	[STAGE_SOURCE_QUEUE_WAIT] = "source-queue-wait",
	[STAGE_INCREMENTAL_LOOKUP] = "incremental-lookup",
	[STAGE_BACKEND_SELECT] = "backend-select",
	[STAGE_RESULT_MERGE] = "result-merge",
	[STAGE_SCANNER_QUEUE_WAIT] = "scanner-queue-wait",
};

static const char *const cache_state_names[_CACHE_STATE_MAX] = {
	[CACHE_STATE_UNKNOWN] = "unknown",
	[CACHE_STATE_DISABLED] = "disabled",
	[CACHE_STATE_COLD] = "cold",
	[CACHE_STATE_WARM] = "warm",
};

static const char *const daemon_state_names[_DAEMON_STATE_MAX] = {
	[DAEMON_STATE_OFF] = "off",
	[DAEMON_STATE_CLIENT] = "client",
	[DAEMON_STATE_WORKER] = "worker",
	[DAEMON_STATE_MASS] = "mass",
};

static const char *const run_state_names[_RUN_STATE_MAX] = {
	[RUN_STATE_CREATED] = "created",
	[RUN_STATE_ACQUIRING] = "acquiring",
	[RUN_STATE_SCANNING] = "scanning",
	[RUN_STATE_RESOLVING] = "resolving",
	[RUN_STATE_VERIFYING] = "verifying",
	[RUN_STATE_REPORTING] = "reporting",
	[RUN_STATE_COMPLETED] = "completed",
	[RUN_STATE_FAILED] = "failed",
};

static int lookup(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int) i;
	return -EINVAL;
}

#define DEFINE_ENUM_NAMES(type, prefix, names)                                  \
	const char *prefix##_to_string(type s)                                  \
	{                                                                       \
		return (unsigned) s < ELEMENTSOF(names) ? names[s] : NULL;      \
	}                                                                       \
	int prefix##_from_string(const char *name)                              \
	{                                                                       \
		return lookup(names, ELEMENTSOF(names), name);                  \
	}

/* the field tables store enums as int */
_Static_assert(sizeof(Stage) == sizeof(int) && sizeof(RunState) == sizeof(int) &&
		       sizeof(CacheState) == sizeof(int) && sizeof(DaemonState) == sizeof(int),
	       "record enums are int-sized");

const EnumNames stage_enum_names = { stage_names, _STAGE_MAX };
const EnumNames run_state_enum_names = { run_state_names, _RUN_STATE_MAX };
const EnumNames cache_state_enum_names = { cache_state_names, _CACHE_STATE_MAX };
const EnumNames daemon_state_enum_names = { daemon_state_names, _DAEMON_STATE_MAX };

DEFINE_ENUM_NAMES(Stage, stage, stage_names)
DEFINE_ENUM_NAMES(CacheState, cache_state, cache_state_names)
DEFINE_ENUM_NAMES(DaemonState, daemon_state, daemon_state_names)
DEFINE_ENUM_NAMES(RunState, run_state, run_state_names)
