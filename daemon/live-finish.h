/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The end of a live run, owned by its session's FinishJob (session-finish.h):
 * on the job's worker thread, the samples are joined with the program's stage
 * spans and states (labels and markers in the profile, so every export has
 * them) and the run's record is made (lib/engine/live/live-record.h); on the
 * loop, the record is stored and the program's FinishRun, if it called it, is
 * answered once the record is on disk.
 */

#include <systemd/sd-bus.h>

#include "cleanup.h"
#include "live-record.h"
#include "manager-call.h"
#include "manager.h"
#include "profile.h"
#include "record.h"
#include "span-log.h"
#include "stage-join.h"

typedef struct LiveFinish {
	SpanLog *log;
	RunProfile *program_record; /* FinishRun's, NULL when the program sent none */
	uint64_t start_mono;        /* CLOCK_MONOTONIC of the profile's time 0 */
	/* the facts, with their strings owned here */
	LiveRunFacts facts;
	char *session_id, *comm, *build_id, *end_reason;
	StageJoin join;
	bool joined;
	ManagerCall reply_to; /* the FinishRun call to answer once the record is stored (loop only) */
} LiveFinish;

/* Answer FinishRun's call once its record is stored (error < 0: it could not be), and release it. */
void live_finish_answer(ManagerCall *c, int error);
/* Frees; a FinishRun still unanswered gets an error (on the loop only). */
LiveFinish *live_finish_free(LiveFinish *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(LiveFinish *, live_finish_free);

/* Worker: join the samples of 'p' with the spans (labels "stage" and "state", markers). */
int live_finish_join(LiveFinish *f, Profile *p);
/* The status of profd's own record of the run: failed unless the program finished it. */
RunState live_finish_status(const LiveFinish *f, RunState session_status);
/*
 * Worker: the run's record in *record, which holds profd's own record of the
 * run ('observed') and is replaced by the program's with profd's additions.
 */
int live_finish_record(LiveFinish *f, const Profile *p, RunProfile **record);
/*
 * Loop: store the record for 'owner' and answer FinishRun once it is durable
 * (or at once, with the error, when it cannot be stored).
 */
int live_finish_store(LiveFinish *f, RunStore *runs, const RunProfile *record, uid_t owner,
		      uint64_t finished_usec, const StoredRun **ret);
