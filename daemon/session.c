/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "access.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "log.h"
#include "session-export.h"
#include "session-identity.h"
#include "session.h"
#include "stack-resolver.h"

static const char *const session_state_names[_SESSION_STATE_MAX] = {
	[SESSION_SAMPLING] = "sampling",
	[SESSION_RESOLVING] = "resolving",
	[SESSION_COMPLETED] = "completed",
	[SESSION_FAILED] = "failed",
};

const char *session_state_to_string(SessionState s)
{
	return s >= 0 && s < _SESSION_STATE_MAX ? session_state_names[s] : NULL;
}

int session_state_from_string(const char *s)
{
	for (int i = 0; i < _SESSION_STATE_MAX; i++)
		if (strcmp(s, session_state_names[i]) == 0)
			return i;
	return -EINVAL;
}

static uint64_t now_usec(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

bool session_is_busy(const Session *s)
{
	return s->state == SESSION_SAMPLING || s->state == SESSION_RESOLVING;
}

Session *session_free(Session *s)
{
	if (!s)
		return NULL;
	sd_event_source_disable_unref(s->io_source);
	sd_event_source_disable_unref(s->timer_source);
	sd_bus_track_unref(s->client);
	sampling_session_free(s->sampling);
	stack_resolver_free(s->resolver);
	run_recorder_free(s->recorder);
	profile_free(s->profile);
	run_profile_free(s->record);
	safe_close(s->pidfd);
	free(s->path);
	free(s->dir);
	free(s->backend);
	free(s->event);
	free(s->run_id);
	free(s->error);
	free(s->metrics_json);
	free(s);
	return NULL;
}

void session_freep(Session **s)
{
	session_free(*s);
}

/* A new, empty session object with a fresh id. */
static int session_new(Manager *m, uid_t owner, pid_t pid, Session **ret)
{
	_cleanup_(session_freep) Session *s = NULL;
	uint64_t rnd;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->manager = m;
	s->owner = owner;
	s->pid = pid;
	s->pidfd = -1;
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return negative_errno();
	snprintf(s->id, sizeof(s->id), "%016" PRIx64, rnd);
	if (asprintf(&s->path, PROFD_SESSION_PREFIX "/%s", s->id) < 0 ||
	    asprintf(&s->dir, "%s/%s", m->sessions_dir, s->id) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(s);
	return 0;
}

/* Copy the engine's metrics, keeping what the daemon itself clamped. */
static int session_snapshot_metrics(Session *s)
{
	SamplingMetrics sm;
	char *backend, *event;

	sampling_session_get_metrics(s->sampling, &sm);
	backend = strdup(sm.backend ?: "");
	event = strdup(sm.event ?: "");
	if (!backend || !event) {
		free(backend);
		free(event);
		return -ENOMEM;
	}
	free(s->backend);
	free(s->event);
	s->backend = backend;
	s->event = event;
	sm.clamped = sm.clamped || s->hz_clamped;
	sm.requested_hz = s->requested_hz;
	sm.backend = s->backend;
	sm.event = s->event;
	/* end_reason and pause_nanos_method are static strings of the engine */
	s->metrics = sm;
	return 0;
}

int session_format_live_metrics(Session *s, char **ret)
{
	int r;

	if (s->state != SESSION_SAMPLING || !s->sampling)
		return s->metrics_json ? (*ret = strdup(s->metrics_json)) ? 0 : -ENOMEM : -ENODATA;
	r = session_snapshot_metrics(s);
	if (r < 0)
		return r;
	return sampling_metrics_format_json(&s->metrics, ret);
}

static void session_emit_changed(Session *s)
{
	sd_bus *bus = s->manager->bus;
	int r;

	if (!bus)
		return;
	/* only properties flagged EMITS_CHANGE may be named here (sd-bus refuses others) */
	r = sd_bus_emit_properties_changed(bus, s->path, PROFD_SESSION_INTERFACE, "State",
					       "DurationUSec", "BufferFull", "RunId", "Error", NULL);
	if (r < 0)
		log_warning("cannot announce the state of session %s: %s", s->id, strerror(-r));
}

static void session_run_saved(int error, void *userdata)
{
	if (error < 0)
		log_error("cannot save a session's run record: %s", strerror(-error));
}

static void session_resolve_done(void *userdata)
{
	Session *s = userdata;
	Manager *m = s->manager;
	int r;

	if (s->record) {
		const StoredRun *run;

		r = run_store_put(m->runs, s->record, s->owner, now_usec(CLOCK_REALTIME), &run,
				  session_run_saved, NULL);
		if (r < 0)
			log_error("cannot store the run record of session %s: %s", s->id, strerror(-r));
		else if (!(s->run_id = strdup(run->run_id)))
			log_error("cannot store the run record of session %s: %s", s->id,
				  strerror(ENOMEM));
	}
	s->record = run_profile_free(s->record);
	s->profile = profile_free(s->profile);
	if (s->resolve_error < 0 && !s->error &&
	    asprintf(&s->error, "cannot write the exports to '%s': %s", s->dir,
		     strerror(-s->resolve_error)) < 0)
		s->error = NULL;
	s->state = s->error ? SESSION_FAILED : SESSION_COMPLETED;
	/* the worker saved the properties, unless it failed on the way */
	if (s->resolve_error < 0 && (r = session_save(s)) < 0)
		log_error("cannot save session %s in '%s': %s", s->id, s->dir, strerror(-r));
	log_info("session %s of pid %d %s: %" PRIu64 " samples, %" PRIu64 " dropped%s%s", s->id,
		 (int)s->pid, session_state_to_string(s->state), s->metrics.samples_captured,
		 s->metrics.samples_dropped, s->error ? ", " : "", s->error ?: "");

	session_emit_changed(s);
	if (m->bus)
		sd_bus_emit_signal(m->bus, s->path, PROFD_SESSION_INTERFACE, "Finished", "s",
				   session_state_to_string(s->state));
	if (s->release_when_finished)
		session_release(s);
	manager_trim_finished_sessions(m);
	manager_check_idle(m);
	manager_update_status(m);
}

/* The window ended (error: why sampling failed, or 0): hand the profile to a worker. */
static void session_finish(Session *s, int error)
{
	Manager *m = s->manager;
	int r;

	s->io_source = sd_event_source_disable_unref(s->io_source);
	s->timer_source = sd_event_source_disable_unref(s->timer_source);
	s->client = sd_bus_track_unref(s->client);
	r = session_snapshot_metrics(s);
	if (r == 0)
		r = sampling_metrics_format_json(&s->metrics, &s->metrics_json);
	if (r < 0 && error == 0)
		error = r;
	if (error < 0 && asprintf(&s->error, "sampling failed: %s", strerror(-error)) < 0)
		s->error = NULL;
	if (sampling_session_is_finished(s->sampling))
		s->profile = sampling_session_steal_profile(s->sampling);
	s->sampling = sampling_session_free(s->sampling); /* the perf fds and rings go now */
	s->pidfd = safe_close(s->pidfd);

	run_recorder_transition(s->recorder, RUN_STATE_RESOLVING);
	run_recorder_set_input(s->recorder, s->metrics.ring_bytes, s->metrics.samples_captured);
	r = cache_state_from_string(stack_resolver_cache_state(s->resolver));
	if (r >= 0)
		run_recorder_identity(s->recorder)->cache_state = r;
	s->resolver = stack_resolver_free(s->resolver);

	s->state = SESSION_RESOLVING;
	session_emit_changed(s);

	r = worker_pool_submit(m->workers, session_write_exports, session_resolve_done, s);
	if (r < 0) {
		/* no thread to do it: do it here rather than lose the session */
		session_write_exports(s);
		session_resolve_done(s);
	}
}

static void session_process(Session *s)
{
	int r = sampling_session_process(s->sampling);

	if (r > 0)
		return;
	session_finish(s, r);
}

static int on_session_io(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	session_process(userdata);
	return 0;
}

static int on_session_deadline(sd_event_source *source, uint64_t usec, void *userdata)
{
	session_process(userdata);
	return 0;
}

void session_stop(Session *s)
{
	if (s->state == SESSION_SAMPLING && s->sampling)
		sampling_session_stop(s->sampling);
}

static int on_client_gone(sd_bus_track *track, void *userdata)
{
	Session *s = userdata;

	log_info("session %s: the client that started it left the bus; stopping it", s->id);
	s->client = sd_bus_track_unref(s->client);
	session_stop(s);
	return 0;
}

int session_stop_on_disconnect(Session *s, sd_bus_message *m)
{
	int r;

	r = sd_bus_track_new(sd_bus_message_get_bus(m), &s->client, on_client_gone, s);
	if (r < 0)
		return r;
	return sd_bus_track_add_sender(s->client, m);
}

static int session_error_from_engine(int r, const SessionRequest *req, sd_bus_error *error)
{
	switch (r) {
	case -ESRCH:
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS,
					 "process %d exited before sampling started", (int)req->pid);
	case -EOPNOTSUPP:
		if (req->event && strcmp(req->event, "cpu-clock") != 0 &&
		    strcmp(req->event, "task-clock") != 0)
			return sd_bus_error_setf(error, PROFD_ERROR_UNSUPPORTED,
						 "event '%s' is not supported here (no hardware PMU?); "
						 "use 'cpu-clock' or 'task-clock'", req->event);
		return sd_bus_error_setf(error, PROFD_ERROR_UNSUPPORTED,
					 "backend '%s' with event '%s' is not supported here; "
					 "try backend 'perf-fp'", req->backend ?: "auto",
					 req->event ?: "cpu-clock");
	case -EINVAL:
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "the sampling engine refused the request: %s", strerror(-r));
	case -EPERM:
	case -EACCES:
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "cannot open perf events for process %d: %s (does profd "
					 "have CAP_PERFMON?)", (int)req->pid, strerror(-r));
	default:
		return sd_bus_error_set_errnof(error, r, "cannot start sampling process %d: %s",
					       (int)req->pid, strerror(-r));
	}
}

int session_start(Manager *m, uid_t owner, const SessionRequest *req, const char *comm, int pidfd,
		  Session **ret, sd_bus_error *error)
{
	_cleanup_(session_freep) Session *s = NULL;
	RunIdentity identity = {};
	StackResolverOptions ro = { .kernel = req->kernel, .cache = m->symbols };
	SamplingOptions opts;
	uint64_t deadline;
	int r;

	r = session_new(m, owner, req->pid, &s);
	if (r < 0) {
		safe_close(pidfd);
		return sd_bus_error_set_errnof(error, r, "cannot create a session: %s", strerror(-r));
	}
	s->pidfd = pidfd;
	s->created_usec = now_usec(CLOCK_REALTIME);
	s->requested_hz = req->hz;
	s->hz_clamped = req->hz > m->max_hz;
	s->requested_duration_usec = req->duration_usec;

	opts = (SamplingOptions){
		.hz = req->hz > m->max_hz ? m->max_hz : req->hz,
		/* saturate: a huge request is clamped by the engine, and reported so */
		.duration_nanos = req->duration_usec > UINT64_MAX / 1000 ? UINT64_MAX
									 : req->duration_usec * 1000,
		.max_duration_nanos = m->config.max_duration_usec * 1000,
		.backend = req->backend,
		.event = req->event,
		.exclude_kernel = !req->kernel,
		.stack_bytes = req->stack_bytes,
		.ring_capacity = req->ring_capacity,
		.ring_capacity_limit = m->config.max_ring_capacity,
	};
	r = stack_unwind_mode_from_backend(req->backend, &ro.mode);
	if (r < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "unknown backend '%s'",
					 req->backend);
	r = stack_resolver_new(&ro, &s->resolver);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot set up unwinding: %s", strerror(-r));
	opts.resolve = stack_resolver_resolve;
	opts.resolve_userdata = s->resolver;

	r = session_identity_new(req, comm, opts.hz, req->duration_usec, &identity);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot create a run record: %s",
					       strerror(-r));
	identity.daemon_state = DAEMON_STATE_WORKER;
	r = run_recorder_new(req->pid, &identity, &s->recorder);
	run_identity_done(&identity);
	if (r < 0)
		return r == -ESRCH ? sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS,
						       "process %d exited", (int)req->pid)
				   : sd_bus_error_set_errnof(error, r, "cannot record a run: %s",
							     strerror(-r));
	run_recorder_transition(s->recorder, RUN_STATE_ACQUIRING);

	r = sampling_session_new(req->pid, &opts, &s->sampling);
	if (r < 0)
		return session_error_from_engine(r, req, error);
	/* the events were opened for the process behind the pidfd only if it still lives */
	if (pidfd_check_alive(s->pidfd) < 0)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS,
					 "process %d exited before sampling started", (int)req->pid);
	r = sampling_session_start(s->sampling);
	if (r < 0)
		return session_error_from_engine(r, req, error);
	r = session_snapshot_metrics(s);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot start a session: %s", strerror(-r));
	r = run_identity_set_string(&run_recorder_identity(s->recorder)->backend_selected,
				    s->backend);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot start a session: %s", strerror(-r));
	run_recorder_identity(s->recorder)->scanner_threads = s->metrics.threads_at_start;
	run_recorder_transition(s->recorder, RUN_STATE_SCANNING);

	r = sd_event_add_io(m->event, &s->io_source, sampling_session_get_fd(s->sampling), EPOLLIN,
			    on_session_io, s);
	if (r >= 0) {
		deadline = sampling_session_get_deadline(s->sampling);
		r = sd_event_add_time(m->event, &s->timer_source, CLOCK_MONOTONIC,
				      deadline == UINT64_MAX ? UINT64_MAX : deadline / 1000, 1000,
				      on_session_deadline, s);
	}
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot watch the session: %s",
					       strerror(-r));

	if (mkdir(s->dir, 0700) < 0 && errno != EEXIST)
		log_warning("cannot create '%s': %s; session %s will not be saved", s->dir,
			    strerror(errno), s->id);
	else if ((r = session_save(s)) < 0)
		log_warning("cannot save session %s: %s", s->id, strerror(-r));

	r = manager_add_session(m, s);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot add the session: %s", strerror(-r));
	log_info("session %s: uid %u samples pid %d (%s) at %" PRIu32 " Hz for %" PRIu64
		 " ms with %s/%s", s->id, (unsigned)owner, (int)req->pid, comm, s->metrics.hz,
		 s->metrics.effective_duration_nanos / 1000000, s->backend, s->event);
	*ret = TAKE_PTR(s);
	return 0;
}

void session_release(Session *s)
{
	if (session_is_busy(s)) {
		session_stop(s);
		s->release_when_finished = true;
		return;
	}
	session_remove_files(s);
	manager_remove_session(s->manager, s);
	session_free(s);
}
