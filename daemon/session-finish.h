/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The end of a session, on a worker thread: the job owns everything it
 * touches (the profile, the run recorder, its own copy of the properties,
 * the session directory's fd), so nothing is shared with the event loop,
 * which takes the results back in the completion. It writes, in order: the
 * profile (the compact file the exports are made from when first asked for),
 * the metrics, the run record (the `reporting` stage covers these writes),
 * and last the properties file, so one saying "completed" means the rest is
 * there. Then it gives what the session freed back to the system (malloc_trim).
 */

#include "cleanup.h"
#include "live-finish.h"
#include "profile.h"
#include "record.h"
#include "session-properties.h"

/* The compact profile in a session's directory (profile-file.h). */
#define SESSION_PROFILE_FILE "profile"

typedef struct FinishJob {
	/* in */
	int dir_fd;
	Profile *profile;        /* NULL when sampling failed before it had one; freed once written */
	char *metrics_json;      /* NULL when there were no metrics */
	RunRecorder *recorder;
	SessionProperties props; /* as sampling left them; state and run id are set here */
	LiveFinish *live;        /* a live run's: its join and record (live-finish.h); else NULL */
	/* the profile as the sandboxed unwinder made it, in place of 'profile': a claim to check */
	int unwound_fd;
	uint64_t samples_given;  /* samples the unwinder was given: it may report no more */
	bool kernel;             /* kernel frames allowed in it */
	bool untimed;            /* counts without times (bpf): profd's to say too */
	uint64_t start_unix_nanos, period_nanos, duration_nanos; /* profd's own, not the unwinder's */
	char *unit;              /* the unit a cgroup session is of (profd's), or NULL */
	struct json_t *stack_quality; /* the stack-quality report for the record, or NULL */
	void *userdata;          /* the completion's (the loop's); the work never touches it */
	/* out */
	RunProfile *record;      /* the run record, for the run store */
	int error;               /* a file could not be written */
} FinishJob;

FinishJob *finish_job_free(FinishJob *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(FinishJob *, finish_job_free);

/* WorkFn: write everything; results in the job. */
void finish_job_work(void *job);
