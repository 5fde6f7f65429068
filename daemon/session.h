/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One profiling session and its org.profd.Profiler1.Session object at
 * /org/profd/Profiler1/session/<id>.
 *
 * States: sampling (perf fds in the event loop) -> resolving (exports and the
 * run record are written on a worker thread) -> completed | failed. A
 * finished session is kept in <state>/sessions/<id>/ (a "session" file of
 * properties plus one file per export format), so its exports outlive a
 * restart; a session interrupted by a crash comes back as failed.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "manager.h"
#include "metrics.h"
#include "record.h"
#include "sampling-session.h"
#include "stack-resolver.h"

/* The properties file in a session's directory; exports sit beside it, named by format. */
#define SESSION_FILE "session"

typedef enum SessionState {
	SESSION_SAMPLING,
	SESSION_RESOLVING,
	SESSION_COMPLETED,
	SESSION_FAILED,
	_SESSION_STATE_MAX,
} SessionState;

const char *session_state_to_string(SessionState s);
int session_state_from_string(const char *s);

/* What a client asked for, after option parsing. */
typedef struct SessionRequest {
	pid_t pid;
	uint32_t hz;
	uint64_t duration_usec;
	const char *backend; /* NULL: auto */
	const char *event;   /* NULL: cpu-clock */
	bool kernel;
	uint32_t stack_bytes;
	uint64_t ring_capacity;
	const char *workload_class; /* NULL: the target's comm */
	bool stop_on_disconnect;    /* end the window when the calling client disconnects */
} SessionRequest;

struct Session {
	Manager *manager;
	char id[17];
	char *path;
	char *dir; /* <state>/sessions/<id> */
	uid_t owner;
	pid_t pid;
	int pidfd;
	SessionState state;
	uint64_t created_usec; /* CLOCK_REALTIME */

	SamplingSession *sampling;
	StackResolver *resolver;
	sd_event_source *io_source, *timer_source;
	RunRecorder *recorder;
	Profile *profile; /* between sampling and the end of resolving */
	RunProfile *record;
	sd_bus_track *client; /* with stop_on_disconnect, while sampling */

	/* properties, final once sampling ended */
	uint32_t requested_hz;
	bool hz_clamped; /* by the daemon's MaxHz, below the engine's own ceiling */
	uint64_t requested_duration_usec;
	SamplingMetrics metrics; /* backend/event point to the strings below */
	char *backend, *event;
	char *run_id;
	char *error;
	char *metrics_json;

	int resolve_error; /* set by the worker writing the exports */
	bool release_when_finished;
};

/*
 * Start sampling the process behind 'pidfd' (taken over, closed on failure)
 * for 'owner', whose access was checked. Errors are set in 'error'.
 */
int session_start(Manager *m, uid_t owner, const SessionRequest *req, const char *comm, int pidfd,
		  Session **ret, sd_bus_error *error);
Session *session_free(Session *s);
void session_freep(Session **s);

bool session_is_busy(const Session *s);
/* Stop sampling when the sender of 'm' leaves the bus (option stop_on_disconnect). */
int session_stop_on_disconnect(Session *s, sd_bus_message *m);
/* Ask a sampling session to end its window now. */
void session_stop(Session *s);
/* Forget the session and its saved exports (later, if it is still busy). */
void session_release(Session *s);

/* Saved sessions (state dir) -> objects; unreadable ones are set aside. */
int session_load_all(Manager *m);

/* Persist the properties file. */
int session_save(Session *s);
/* The same with the state and run id the session is about to have (from a worker thread). */
int session_save_as(Session *s, SessionState state, const char *run_id);
/* The metrics JSON: live while sampling, final after. -ENODATA when there is none. */
int session_format_live_metrics(Session *s, char **ret);

int session_object_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
			void **ret_found, sd_bus_error *error);
int session_node_enumerator(sd_bus *bus, const char *path, void *userdata, char ***ret_nodes,
			    sd_bus_error *error);
extern const sd_bus_vtable session_vtable[];
