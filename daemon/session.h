/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One profiling session and its org.profd.Profiler1.Session object at
 * /org/profd/Profiler1/session/<id>: a small state machine on the event loop.
 *
 *   sampling   a Collector drains and unwinds on threads of its own; the loop
 *              only hears, through its fd, that it finished
 *   resolving  an owned FinishJob writes the profile, metrics, run record and
 *              properties on a worker thread (session-finish.h)
 *   completed | failed
 *
 * No struct is touched by two threads: the collector is only called through
 * its thread-safe API, and the finish job owns what it works on. A finished
 * session is kept in <state>/sessions/<id>/, so its exports outlive a restart;
 * a session interrupted by a crash comes back as failed.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "access.h"
#include "cleanup.h"
#include "collector.h"
#include "manager.h"
#include "metrics.h"
#include "record.h"
#include "session-properties.h"

/* What a client asked for, after option parsing. */
typedef struct SessionRequest {
	pid_t pid;
	uint32_t hz;
	uint64_t duration_usec;
	const char *backend; /* NULL: auto */
	const char *event;   /* NULL: cpu-clock */
	bool kernel;
	uint32_t stack_bytes;
	uint64_t sample_budget;
	const char *workload_class; /* NULL: the target's comm (the unit, cgroup, "system") */
	bool stop_on_disconnect;    /* end the window when the calling client disconnects */
	/* with pid 0, one of: */
	const char *cgroup;         /* a cgroup2 path, absolute or relative to its mount */
	const char *unit;           /* a systemd unit (system, else the caller's) */
	const char *unit_cgroup;    /* ... its cgroup, looked up before (unit-lookup.h) */
	bool system;                /* the whole machine */
	uint32_t max_events;        /* perf fds the session may open (its fd budget); 0 = no cap */
	uint32_t min_threads;       /* threads to charge descriptors for, if the target has fewer */
	uint64_t max_duration_usec; /* the ceiling; 0: MaxDurationSec */
} SessionRequest;

typedef struct LiveRun LiveRun;

/*
 * Who may keep profiling the target: what the collector's drain thread re-checks
 * (one process), or the caller whose rules admit each process (many).
 */
typedef struct SessionCheck {
	CallerCreds caller;
	pid_t pid;
} SessionCheck;

struct Session {
	Manager *manager;
	SESSION_PROPERTY_GROUP; /* s->id, s->owner, s->state, ... and s->props */
	char *path;
	char *dir;          /* <state>/sessions/<id>, for messages; files are reached by fd */
	char *client_name;  /* unique bus name of the starter (its signals go there); NULL when loaded */
	uint64_t fd_charge; /* of the manager's fd budget, while the perf events are open */
	int pidfd;

	/* sampling */
	SamplingTarget *sampling_target; /* a cgroup, unit or the system; NULL for a pid */
	Collector *collector;
	sd_event_source *done_source; /* the collector's fd: readable once it finished */
	SessionCheck *check;
	RunRecorder *recorder;        /* until the finish job takes it */
	uint64_t unwinder;            /* its attachment to the owner's unwinder, 0 when none */
	int unwound_fd;               /* the unwinder's profile file, unchecked (finish job checks) */
	char *unwind_error;           /* why the unwinder failed it */
	bool kernel;                  /* kernel frames wanted and allowed */
	sd_bus_track *disconnect;     /* with stop_on_disconnect, while sampling */
	bool hz_clamped;              /* by the daemon's MaxHz, below the engine's own ceiling */
	/* one process: its program, whose stack copy this session learns (stack-sizes.h) */
	StackSizeKey stack_key;
	bool learns_stack_size;

	LiveRun *live;                /* a live run's span ring and FinishRun (BeginRun); else NULL */

	SamplingMetrics metrics; /* the latest snapshot; backend/event point into the properties */
	char *metrics_json;      /* final, once sampling ended */
	bool release_when_finished;
};

/*
 * Start sampling the process behind 'pidfd' (taken over, closed on failure)
 * for 'caller', whose access was checked; unless it is root, it is checked
 * again before every drain (access_recheck_target()). Or, with req->pid 0,
 * 'target' (a cgroup, unit or the system; taken over, pidfd -1): unless the
 * caller is root, only its processes that pass the per-process rules are
 * sampled (access_admit_process()). Errors are set in 'error'.
 */
int session_start(Manager *m, const CallerCreds *caller, const SessionRequest *req,
		  const char *comm, int pidfd, SamplingTarget *target, Session **ret,
		  sd_bus_error *error);
Session *session_free(Session *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Session *, session_free);

bool session_is_busy(const Session *s);
/* Stop sampling when the sender of 'm' leaves the bus (option stop_on_disconnect). */
int session_stop_on_disconnect(Session *s, sd_bus_message *m);
/* Ask a sampling session to end its window now. */
void session_stop(Session *s);
/* Forget the session and its saved files (later, if it is still busy). */
void session_release(Session *s);

/*
 * The session's directory, opened without following links (a new fd, or a
 * negative errno); session_make_dir() creates it when missing (to write).
 */
int session_open_dir(const Session *s);
int session_make_dir(const Session *s);

/* Saved sessions (state dir) -> objects; unreadable ones are set aside. */
int session_load_all(Manager *m);

/* While sampling: the live counters into the properties and metrics. */
void session_refresh(Session *s);
/* The metrics JSON: live while sampling, final after. -ENODATA when there is none. */
int session_format_live_metrics(Session *s, char **ret);

/* session-bus.c: the object, and what it tells the session's starter. */
int session_object_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
			void **ret_found, sd_bus_error *error);
int session_node_enumerator(sd_bus *bus, const char *path, void *userdata, char ***ret_nodes,
			    sd_bus_error *error);
/* PropertiesChanged of the properties that announce changes, to the starter only (bus-unicast.h). */
void session_emit_changed(Session *s);
/* Finished(state), to the starter only. */
void session_emit_finished(Session *s);
extern const sd_bus_vtable session_vtable[];
