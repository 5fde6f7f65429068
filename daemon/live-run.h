/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A live run (BeginRun): a sampling session of the calling program plus its
 * span ring, which profd drains on the loop every 100 ms (and once more when
 * sampling ends), and the program's FinishRun once it arrives. The session
 * owns its LiveRun; at its end the LiveRun becomes a LiveFinish for the
 * session's FinishJob (live-finish.h).
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "live-finish.h"
#include "manager-call.h"
#include "manager.h"
#include "metrics.h"
#include "span-log.h"

typedef struct LiveRunOptions {
	SpanRingGeometry geometry;
	uint64_t max_spans;
	const char *run_id;
} LiveRunOptions;

typedef struct LiveRun {
	Session *session;
	char *run_id;
	SpanRingReader *reader;
	sd_event_source *drain_timer;
	char *build_id; /* of the program's executable, when it has one */
	char comm[64];  /* its name when the run began */
	/* a program in another pid namespace: its threads' ids there -> profd's, read at most once a second */
	uint32_t (*ns_tids)[2];
	size_t n_ns_tids;
	uint64_t ns_tids_read_nsec; /* CLOCK_MONOTONIC; 0: never */
	/* FinishRun, between its arrival and the end of sampling */
	RunProfile *program_record;
	ManagerCall finish_call;
	bool finishing;
} LiveRun;

/*
 * The live part of session 's' (sampling already): its ring, whose memfd is
 * returned in *ret_memfd for the program. The program's tids and clock are
 * translated when it lives in other pid or time namespaces.
 */
int live_run_new(Session *s, const LiveRunOptions *o, int *ret_memfd, LiveRun **ret);
/* Frees; a FinishRun still waiting gets an error. */
LiveRun *live_run_free(LiveRun *l);

/* FinishRun: the program's record and the call to answer, both taken over. Sampling ends now. */
void live_run_finish(LiveRun *l, RunProfile *record, ManagerCall call);

/* Sampling ended: a last drain, and what the finish job needs (the run's call included). */
int live_run_hand_over(LiveRun *l, const SamplingMetrics *m, LiveFinish **ret);
