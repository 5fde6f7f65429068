/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The keyhog-profile-v1 run record of one sampling session, made the same way
 * by profd and by `profctl --local record -f record` (docs/record-format.md,
 * "The record of a sampling session"): identity of the target, transitions
 * with resource snapshots of the target, the run's input.
 *
 *   session_run_begin()      identity and "created", then "acquiring" (before
 *                            the events are opened)
 *   session_run_sampling()   the effective settings are known: backend_selected,
 *                            config_digest; "scanning"
 *   session_run_resolving()  the window ended: scanner_threads, input, cache
 *                            state; "resolving"
 *   then run_recorder_transition(r, RUN_STATE_REPORTING) while the outputs are
 *   written, and run_recorder_finish(r, RUN_STATE_COMPLETED or _FAILED, ...).
 */

#include <stdbool.h>
#include <sys/types.h>

#include "metrics.h"
#include "record.h"
#include "sampling-session.h"

typedef struct SessionRunOptions {
	/* many processes: a cgroup (a unit's, when it names one) or the system; NULL: the pid */
	const SamplingTarget *target;
	const char *comm;              /* the target's name; NULL: read from /proc */
	const char *workload_class;    /* NULL: the target's name */
	const char *backend_requested; /* NULL: "auto" */
	DaemonState daemon_state;      /* profd: worker; profctl --local: off */
} SessionRunOptions;

/* Lower-case hex GNU build-id of /proc/<pid>/exe; -ENODATA when it has none, -ESRCH when gone. */
int session_run_build_id(pid_t pid, char **ret);

/*
 * The effective request as one canonical line and its digest (FNV-1a 64 in
 * hex: tells configurations apart, not a security boundary). From what the
 * session runs with (metrics: hz, duration, backend, event, stack bytes) and
 * what the caller asked the engine for (kernel frames, an explicit budget and
 * its limit), so equal effective settings give equal digests.
 */
int session_run_config_digest(const SamplingOptions *requested, const SamplingMetrics *m,
			      char **ret);

/*
 * -ESRCH when the target is gone already. A multi-process target's run has
 * source_kind "cgroup", "unit" or "system", its workload_class the unit's
 * name or the cgroup's path (unless given), and the cgroup's resources
 * (cpu.stat, memory.current; none for the system).
 */
int session_run_begin(pid_t pid, const SessionRunOptions *o, RunRecorder **ret);
/* Sampling started with these options; m: the session's metrics now. */
int session_run_sampling(RunRecorder *r, const SamplingOptions *requested, const SamplingMetrics *m);
/* The window ended; m: final metrics; cache_state "cold"/"warm" or NULL (unknown). */
int session_run_resolving(RunRecorder *r, const SamplingMetrics *m, const char *cache_state);

/*
 * The finished record gets the session's stack-quality report (stack-quality.h;
 * NULL: none, nothing changes) as the extra field "profd": {"stack_quality": ...}
 * (a live run's "profd" object keeps what it has).
 */
int session_run_add_stack_quality(RunProfile *record, json_t *quality);
