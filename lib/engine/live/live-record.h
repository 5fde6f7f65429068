/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The run record of a live run: the program's own keyhog-profile-v1 record
 * (authoritative for its stages, counters and transitions) with what profd
 * adds as extra fields, which the format keeps:
 *
 *   identity.profd     what profd verified: pid, uid, comm, the executable's build-id
 *   stages[i].profd    samples in the stage, their share of all samples, hottest functions
 *   states[i].profd    the same per macro state, when the record's states are the
 *                      transitions profd saw
 *   profd              the run as profd saw it: session, end reason, sampling and span
 *                      counters, unstaged samples, every state it saw, profd's own
 *                      transitions and resource usage of the target
 *
 * A program that never sent its record (it crashed, hung or exited first)
 * gets profd's record of the run instead, status failed, with its stages
 * summed from the spans profd received.
 */

#include <stdint.h>

#include "profile.h"
#include "record.h"
#include "span-log.h"
#include "stage-join.h"

typedef struct LiveRunFacts {
	const char *session_id;
	uint32_t pid, uid;
	const char *comm;
	const char *build_id;   /* the executable's, NULL without one */
	const char *end_reason; /* "finished", "deadline", "target-exited", "stopped", ... */
	uint32_t hz;
	uint64_t samples_dropped;
} LiveRunFacts;

/*
 * Add profd's fields to 'record'. 'observed' is profd's own record of the run
 * (transitions and resources of the target as profd saw them), or NULL when
 * 'record' is that record.
 */
int live_record_annotate(RunProfile *record, const RunProfile *observed, const StageJoin *join,
			 const Profile *p, const SpanLog *log, const LiveRunFacts *facts);

/*
 * For a run whose program sent no record: the stages of profd's own record
 * summed from the spans (elapsed, calls; attributed_ns is unknown, 0).
 */
int live_record_add_span_stages(RunProfile *record, const SpanLog *log);

/*
 * FinishRun of a run profd had already stored as failed (it restarted, or the
 * run's session is gone): the program's 'record' takes profd's additions from
 * 'stored' (identity.profd, stages[].profd by stage, profd), marked
 * "finished_late". -ENOENT when 'stored' has none.
 */
int live_record_adopt(RunProfile *record, const RunProfile *stored);
