/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "atomic-file.h"
#include "backend-choice.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "export.h"
#include "live-run.h"
#include "log.h"
#include "session-file.h"
#include "session-finish.h"
#include "session-run.h"
#include "session-target.h"
#include "session.h"
#include "time-util.h"

static uint64_t now_usec(clockid_t clock)
{
	return clock_nanos(clock) / 1000;
}

bool session_is_busy(const Session *s)
{
	return s->state == SESSION_SAMPLING || s->state == SESSION_RESOLVING;
}

Session *session_free(Session *s)
{
	if (!s)
		return NULL;
	sd_event_source_disable_unref(s->done_source);
	sd_bus_track_unref(s->disconnect);
	/* the unwinder's attachment names the collector: it goes first */
	if (s->unwinder)
		unwinder_pool_detach(s->manager->unwinders, s->unwinder);
	collector_free(s->collector);
	live_run_free(s->live);
	safe_close(s->unwound_fd);
	free(s->unwind_error);
	/* the collector's threads are joined: nothing reads the check or the target any more */
	free(s->check);
	sampling_target_free(s->sampling_target);
	manager_release_session_fds(s->manager, s);
	run_recorder_free(s->recorder);
	safe_close(s->pidfd);
	session_properties_done(&s->props);
	free(s->path);
	free(s->dir);
	free(s->client_name);
	free(s->metrics_json);
	free(s);
	return NULL;
}

/* An empty session object named 'id' (a fresh one when NULL). */
static int session_new(Manager *m, const char *id, Session **ret)
{
	_cleanup_(session_freep) Session *s = calloc(1, sizeof(*s));
	uint64_t rnd;

	if (!s)
		return -ENOMEM;
	s->manager = m;
	s->pidfd = -1;
	s->unwound_fd = -1;
	if (id)
		snprintf(s->id, sizeof(s->id), "%s", id);
	else {
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			return negative_errno();
		snprintf(s->id, sizeof(s->id), "%016" PRIx64, rnd);
	}
	if (asprintf(&s->path, PROFD_SESSION_PREFIX "/%s", s->id) < 0 ||
	    asprintf(&s->dir, "%s/%s", m->sessions_dir, s->id) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(s);
	return 0;
}

int session_open_dir(const Session *s)
{
	return open_private_dir(s->manager->sessions_fd, s->id, 0);
}

int session_make_dir(const Session *s)
{
	return open_private_dir(s->manager->sessions_fd, s->id, 0700);
}

/* The properties file, in a directory made for it if needed (its failure tells the real cause). */
static int session_save(Session *s)
{
	_cleanup_close_ int dir_fd = session_make_dir(s);

	if (dir_fd < 0)
		return dir_fd;
	return session_file_write(dir_fd, &s->props);
}

/* The engine's metrics into the session's, keeping what the daemon itself clamped. */
static int session_take_metrics(Session *s, const SamplingMetrics *sm)
{
	int r;

	/* the strings become the session's own: the engine's are static, but a snapshot is ours */
	r = session_properties_set_string(&s->backend, sm->backend);
	if (r >= 0)
		r = session_properties_set_string(&s->event, sm->event);
	if (r < 0)
		return r;
	s->metrics = *sm;
	s->metrics.clamped = sm->clamped || s->hz_clamped;
	s->metrics.requested_hz = s->requested_hz;
	s->metrics.backend = s->backend;
	s->metrics.event = s->event;
	/* the engine's target text goes with it; a unit is the session's to name */
	s->metrics.target = s->target;

	s->hz = sm->hz;
	s->effective_duration_nanos = sm->effective_duration_nanos;
	s->duration_nanos = sm->duration_nanos;
	s->clamped = s->metrics.clamped;
	s->buffer_full = sm->buffer_full;
	s->samples_captured = sm->samples_captured;
	s->samples_dropped = sm->samples_dropped;
	s->threads_seen = (uint32_t)sm->threads_seen;
	s->threads_at_start = (uint32_t)sm->threads_at_start;
	session_properties_update_duration(&s->props);
	return 0;
}

void session_refresh(Session *s)
{
	SamplingMetrics sm;

	if (s->state != SESSION_SAMPLING || !s->collector)
		return;
	collector_get_metrics(s->collector, &sm);
	(void)session_take_metrics(s, &sm);
}

int session_format_live_metrics(Session *s, char **ret)
{
	if (s->state != SESSION_SAMPLING || !s->collector)
		return s->metrics_json ? (*ret = strdup(s->metrics_json)) ? 0 : -ENOMEM : -ENODATA;
	session_refresh(s);
	return sampling_metrics_format_json(&s->metrics, ret);
}

static void session_set_state(Session *s, SessionState state)
{
	s->state = state;
	session_properties_update_duration(&s->props);
	session_emit_changed(s);
}

static void session_run_saved(int error, void *userdata)
{
	if (error < 0)
		log_error("cannot save a session's run record: %s", strerror(-error));
}

/* resolving -> completed | failed, on the loop: take the job's results back. */
static void session_finished(void *userdata)
{
	_cleanup_(finish_job_freep) FinishJob *j = userdata;
	Session *s = NULL;
	Manager *m;
	int r;

	/* the job names its session by id: it may have been released meanwhile */
	m = j->userdata;
	s = manager_find_session(m, j->props.id);
	if (j->record) {
		const StoredRun *run;

		r = j->live ? live_finish_store(j->live, m->runs, j->record, j->props.owner,
						now_usec(CLOCK_REALTIME), &run)
			    : run_store_put(m->runs, j->record, j->props.owner, now_usec(CLOCK_REALTIME),
					    &run, session_run_saved, NULL);
		if (r < 0)
			log_error("cannot store the run record of session %s: %s", j->props.id,
				  strerror(-r));
		else if (s && session_properties_set_string(&s->run_id, run->run_id) < 0)
			log_error("cannot store the run record of session %s: %s", j->props.id,
				  strerror(ENOMEM));
	}
	if (!s)
		return;
	if (j->error < 0 && !s->error &&
	    asprintf(&s->error, "cannot write the session's files to '%s': %s", s->dir,
		     strerror(-j->error)) < 0)
		s->error = NULL;
	/* the job saved the properties, unless it failed on the way */
	if (j->error < 0 && (r = session_save(s)) < 0)
		log_error("cannot save session %s in '%s': %s", s->id, s->dir, strerror(-r));
	log_info("session %s of pid %d %s: %" PRIu64 " samples, %" PRIu64 " dropped%s%s", s->id,
		 (int)s->pid, s->error ? "failed" : "completed", s->samples_captured,
		 s->samples_dropped, s->error ? ", " : "", s->error ?: "");

	session_set_state(s, s->error ? SESSION_FAILED : SESSION_COMPLETED);
	session_emit_finished(s);
	if (s->release_when_finished)
		session_release(s);
	manager_trim_finished_sessions(m);
	manager_check_idle(m);
	manager_update_status(m);
}

/* A job owning everything the end of the session needs (see session-finish.h). */
static int session_new_finish_job(Session *s, Profile *profile, FinishJob **ret)
{
	_cleanup_(finish_job_freep) FinishJob *j = calloc(1, sizeof(*j));
	int r;

	if (!j) {
		profile_free(profile);
		return -ENOMEM;
	}
	j->userdata = s->manager;
	j->profile = profile;
	j->dir_fd = session_make_dir(s);
	if (s->metrics_json && !(j->metrics_json = strdup(s->metrics_json)))
		return -ENOMEM;
	r = session_properties_copy(&s->props, &j->props);
	if (r < 0)
		return r;
	j->recorder = TAKE_PTR(s->recorder);
	if (s->live) {
		r = live_run_hand_over(s->live, &s->metrics, &j->live);
		if (r < 0)
			return r;
	}
	j->unwound_fd = TAKE_FD(s->unwound_fd);
	j->samples_given = s->metrics.samples_captured;
	j->kernel = s->kernel;
	j->start_unix_nanos = s->metrics.start_unix_nanos;
	j->period_nanos = s->metrics.period_nanos;
	j->duration_nanos = s->metrics.duration_nanos;
	j->untimed = s->metrics.untimed;
	if (s->sampling_target && s->sampling_target->unit &&
	    !(j->unit = strdup(s->sampling_target->unit)))
		return -ENOMEM;
	*ret = TAKE_PTR(j);
	return 0;
}

/*
 * Adaptive stack copy: a process's sessions copy what earlier sessions of its
 * program (for this caller) needed, within the request's stack_bytes.
 */
static void session_use_learned_stack_size(Session *s, const CallerCreds *caller,
					   SamplingOptions *sampling)
{
	uint32_t ceiling = sampling->stack_bytes ?: SAMPLING_DEFAULT_STACK_BYTES;

	if (stack_size_key_of_pid(s->pid, caller->uid, &s->stack_key) < 0)
		return; /* copies the whole stack_bytes and learns nothing */
	s->learns_stack_size = true;
	sampling->stack_bytes_copy = stack_sizes_get(s->manager->stack_sizes, &s->stack_key, ceiling);
}

/*
 * What unwinding this session needed, for the program's next sessions; a few
 * samples say too little (the 99.9th percentile of ten is their deepest).
 */
#define STACK_SIZE_MIN_SAMPLES 100U
static void session_learn_stack_size(Session *s)
{
	StackSizeKey key;
	int r;

	if (!s->learns_stack_size || s->error || s->metrics.stack_bytes_needed == 0 ||
	    s->metrics.samples_captured < STACK_SIZE_MIN_SAMPLES)
		return;
	/*
	 * An exec (profctl record -- CMD holds CMD until the session runs): the stacks were
	 * the new program's, known while the process lives (checked after the look, so
	 * that a recycled pid is not taken for it)
	 */
	if (collector_target_execed(s->collector)) {
		if (s->pidfd < 0 || stack_size_key_of_pid(s->pid, s->owner, &key) < 0 ||
		    pidfd_check_alive(s->pidfd) < 0)
			return;
		s->stack_key = key;
	}
	r = stack_sizes_put(s->manager->stack_sizes, &s->stack_key, s->metrics.stack_bytes,
			    s->metrics.stack_bytes_needed);
	if (r < 0)
		log_warning("cannot save '%s/" STACK_SIZES_FILE "': %s", s->manager->state_dir,
			    strerror(-r));
}

/* StackQualityFetchFn: what profd's debuginfod fetch made of a build-id, for the report's hints. */
static StackQualityFetch session_fetch_state(void *userdata, const char *build_id)
{
	return debuginfod_fetch_state(userdata, build_id);
}

/* The final metrics, with the session's stack-quality report (if any) as "stack_quality". */
static int session_format_final_metrics(Session *s, json_t **ret_quality)
{
	Manager *m = s->manager;
	_cleanup_(json_decrefp) json_t *quality = NULL, *extra = NULL;
	int r;

	if (collector_get_stack_quality(s->collector, m->debuginfod ? session_fetch_state : NULL,
					m->debuginfod, &quality) >= 0 &&
	    !(extra = json_pack("{s:O}", "stack_quality", quality)))
		return -ENOMEM;
	r = sampling_metrics_format_json_with(&s->metrics, extra, &s->metrics_json);
	if (r < 0)
		return r;
	*ret_quality = TAKE_PTR(quality);
	return 0;
}

/* sampling -> resolving (error: why sampling failed, or 0): hand the end to a worker. */
static void session_finish(Session *s, int error)
{
	Manager *m = s->manager;
	_cleanup_profile_ Profile *profile = NULL;
	_cleanup_(json_decrefp) json_t *quality = NULL;
	SamplingMetrics sm;
	FinishJob *j = NULL;
	int r;

	s->done_source = sd_event_source_disable_unref(s->done_source);
	s->disconnect = sd_bus_track_unref(s->disconnect);
	collector_get_metrics(s->collector, &sm);
	r = session_take_metrics(s, &sm);
	if (r == 0)
		r = session_format_final_metrics(s, &quality);
	if (r < 0 && error == 0)
		error = r;
	if (error < 0 && s->unwind_error)
		s->error = TAKE_PTR(s->unwind_error);
	else if (error < 0 && asprintf(&s->error, "sampling failed: %s", strerror(-error)) < 0)
		s->error = NULL;
	session_learn_stack_size(s);
	profile = collector_steal_profile(s->collector);
	(void)session_run_resolving(s->recorder, &s->metrics,
				    collector_cache_state(s->collector) ?: "cold");
	/* its threads ended; the rings go now (the finish job trims what they freed), the
	 * backlog to the owner's next session if the unwinder took it to the end */
	unwinder_pool_keep_backlog(m->unwinders, s->owner, collector_take_backlog(s->collector));
	s->collector = collector_free(s->collector);
	free(s->check); /* the collector that read it is gone */
	s->check = NULL;
	manager_release_session_fds(m, s);
	s->pidfd = safe_close(s->pidfd);

	session_set_state(s, SESSION_RESOLVING);
	r = session_new_finish_job(s, TAKE_PTR(profile), &j);
	if (r >= 0) {
		j->stack_quality = TAKE_PTR(quality);
		r = worker_pool_submit(m->workers, finish_job_work, session_finished, j);
		if (r < 0) {
			/* no thread to do it: do it here rather than lose the session */
			finish_job_work(j);
			session_finished(j);
		}
		return;
	}
	log_error("cannot finish session %s: %s", s->id, strerror(-r));
	if (!s->error && asprintf(&s->error, "cannot finish: %s", strerror(-r)) < 0)
		s->error = NULL;
	session_set_state(s, SESSION_FAILED);
	session_emit_finished(s);
	manager_check_idle(m);
	manager_update_status(m);
}

/* UnwinderDoneFn: the unwinder ended this session; the collector knows already. */
static void session_unwound(void *userdata, int profile_fd, int error, const char *why)
{
	Session *s = userdata;

	s->unwinder = 0;
	s->unwound_fd = profile_fd;
	if (error < 0 && asprintf(&s->unwind_error, "unwinding failed: the unwinder of uid %u %s",
				  (unsigned)s->owner, why ?: strerror(-error)) < 0)
		s->unwind_error = NULL;
}

static int on_collector_done(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	Session *s = userdata;

	/* its threads are done: this only joins them */
	session_finish(s, collector_wait(s->collector));
	return 0;
}

void session_stop(Session *s)
{
	if (s->state == SESSION_SAMPLING && s->collector)
		collector_stop(s->collector);
}

static int on_client_gone(sd_bus_track *track, void *userdata)
{
	Session *s = userdata;

	log_info("session %s: the client that started it left the bus; stopping it", s->id);
	s->disconnect = sd_bus_track_unref(s->disconnect);
	session_stop(s);
	return 0;
}

int session_stop_on_disconnect(Session *s, sd_bus_message *m)
{
	int r;

	r = sd_bus_track_new(sd_bus_message_get_bus(m), &s->disconnect, on_client_gone, s);
	if (r < 0)
		return r;
	return sd_bus_track_add_sender(s->disconnect, m);
}

/* CollectorCheckFn, on the drain thread: only a change of credentials ends the session. */
static int session_check_target(void *userdata)
{
	const SessionCheck *c = userdata;

	/* a target that is gone ends the session by itself, with all it sampled */
	return access_recheck_target(&c->caller, c->pid) == -EPERM ? -EPERM : 0;
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
	case -EMFILE:
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "process %d started threads while its events were opened and "
					 "needs more than the %" PRIu32 " perf events it was granted; "
					 "try again", (int)req->pid, req->max_events);
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

/* What the engine is asked for: the request within the daemon's limits. */
static SamplingOptions session_sampling_options(const Manager *m, const SessionRequest *req)
{
	/* the default hz stays within MaxHz too */
	uint32_t hz = req->hz ? req->hz : SAMPLING_DEFAULT_HZ;

	return (SamplingOptions){
		.hz = hz > m->max_hz ? m->max_hz : hz,
		/* saturate: a huge request is clamped by the engine, and reported so */
		.duration_nanos = req->duration_usec > UINT64_MAX / 1000 ? UINT64_MAX
									 : req->duration_usec * 1000,
		.max_duration_nanos = (req->max_duration_usec ?: m->config.max_duration_usec) * 1000,
		.backend = req->backend,
		.event = req->event,
		.exclude_kernel = !req->kernel,
		.stack_bytes = req->stack_bytes,
		.sample_budget = req->sample_budget,
		.sample_budget_limit = m->config.max_sample_budget,
		.max_events = req->max_events,
	};
}

static int session_open_collector(Session *s, const CallerCreds *caller, const SessionRequest *req,
				  const SamplingOptions *sampling, sd_bus_error *error)
{
	Manager *m = s->manager;
	/* the caller's last backlog, its pages touched already (freed here if it does not fit) */
	_cleanup_(backlog_freep) Backlog *spare = unwinder_pool_take_backlog(m->unwinders, caller->uid);
	CollectorOptions o = {
		.sampling = *sampling,
		.reuse_backlog = &spare,
		.max_backlog_bytes = m->config.max_backlog_bytes,
		.kernel_table = m->kernel_table,
		.debug_fetch = m->debuginfod ? debuginfod_fetch_opener(m->debuginfod) : NULL,
		.debug_substitute = m->inflated_debug ? inflated_debug_substitute(m->inflated_debug)
						      : NULL,
	};
	BackendChoice choice;
	StackUnwindMode mode;
	bool bpf;
	int r;

	/* what 'auto' picks for this target: the collector picks the same */
	r = sampling_backend_choose(sampling->backend,
				    s->sampling_target ? s->sampling_target->kind : SAMPLING_TARGET_PID,
				    &choice);
	if (r < 0)
		return session_error_from_engine(r, req, error);
	/*
	 * every session, of one process or many, of any backend, root's too (a
	 * system session samples everyone's processes): nothing the caller controls
	 * is parsed here, the owner's unwinder does it. bpf stays root's: its
	 * program sees every process's stacks, and the per-process rules that admit
	 * another caller's targets are not in it
	 */
	bpf = strcmp(choice.backend, "bpf") == 0;
	o.unwind_elsewhere = true;
	if (bpf && caller->uid != 0)
		return sd_bus_error_setf(error, PROFD_ERROR_UNSUPPORTED,
					 "backend 'bpf' is only for uid 0's sessions; use backend "
					 "'perf-dwarf' or 'perf-fp'");

	/* root may profile anything: only other callers' targets are checked again */
	if (caller->uid != 0) {
		s->check = calloc(1, sizeof(*s->check));
		if (!s->check)
			return sd_bus_error_set_errnof(error, ENOMEM, "cannot start a session: %s",
						       strerror(ENOMEM));
		*s->check = (SessionCheck){ .caller = *caller, .pid = req->pid };
		if (s->sampling_target) {
			/* many processes: each one only if it passes the per-process rules */
			o.sampling.admit = access_admit_process;
			o.sampling.admit_userdata = &s->check->caller;
		} else {
			o.check = session_check_target;
			o.check_userdata = s->check;
		}
	}
	if (s->sampling_target && s->sampling_target->kind == SAMPLING_TARGET_SYSTEM) {
		o.sampling.admit = session_target_admit_system; /* root's only */
		o.sampling.admit_userdata = m->unwinders;
	}
	o.sampling.target = s->sampling_target;
	r = collector_new(req->pid, &o, &s->collector);
	if (r < 0)
		return session_error_from_engine(r, req, error);
	/* the events were opened for the process behind the pidfd only if it still lives */
	if (s->pidfd >= 0 && pidfd_check_alive(s->pidfd) < 0)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS,
					 "process %d exited before sampling started", (int)req->pid);
	s->kernel = req->kernel;
	/* the unwinder is up (and may read the target's mappings) before the first sample;
	 * bpf's kernel-walked callchains are named as perf-fp's */
	mode = STACK_UNWIND_FP;
	r = bpf ? 0 : stack_unwind_mode_from_backend(choice.backend, &mode);
	if (r == 0)
		r = unwinder_pool_attach(m->unwinders,
					 &(UnwinderSessionInfo){ .owner = caller->uid,
								 /* 0: many processes; bpf's
								  * are named by their records
								  * even of one */
								 .pid = bpf ? 0 : (uint32_t)req->pid,
								 .dwarf = mode == STACK_UNWIND_DWARF,
								 .kernel = req->kernel },
					 s->collector, session_unwound, s, &s->unwinder);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot start the unwinder of uid %u: %s",
					       (unsigned)caller->uid, strerror(-r));
	r = collector_start(s->collector);
	if (r == -EPERM && s->check)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "process %d changed its credentials; uid %u may not profile it "
					 "any more", (int)req->pid, (unsigned)caller->uid);
	if (r < 0)
		return session_error_from_engine(r, req, error);
	r = sd_event_add_io(m->event, &s->done_source, collector_get_fd(s->collector), EPOLLIN,
			    on_collector_done, s);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot watch the session: %s",
					       strerror(-r));
	return 0;
}

int session_start(Manager *m, const CallerCreds *caller, const SessionRequest *req,
		  const char *comm, int pidfd, SamplingTarget *target, Session **ret,
		  sd_bus_error *error)
{
	_cleanup_(session_freep) Session *s = NULL;
	SamplingOptions sampling = session_sampling_options(m, req);
	SamplingMetrics sm;
	int r;

	r = session_new(m, NULL, &s);
	if (r < 0) {
		safe_close(pidfd);
		sampling_target_free(target);
		return sd_bus_error_set_errnof(error, r, "cannot create a session: %s", strerror(-r));
	}
	s->pidfd = pidfd;
	s->sampling_target = target;
	s->owner = caller->uid;
	s->pid = req->pid;
	r = target ? sampling_target_describe(target, &s->target) :
		     asprintf(&s->target, "pid:%d", (int)req->pid) < 0 ? -ENOMEM : 0;
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot create a session: %s", strerror(-r));
	s->state = SESSION_SAMPLING;
	s->created_usec = now_usec(CLOCK_REALTIME);
	/* requested as given (0 = the default) */
	s->requested_hz = req->hz;
	s->hz_clamped = (req->hz ? req->hz : SAMPLING_DEFAULT_HZ) > m->max_hz;
	s->requested_duration_usec = req->duration_usec;
	r = session_run_begin(req->pid,
			      &(SessionRunOptions){ .target = target,
						    .comm = comm,
						    .workload_class = req->workload_class,
						    .backend_requested = req->backend,
						    .daemon_state = DAEMON_STATE_WORKER },
			      &s->recorder);
	if (r == -ESRCH)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS, "process %d exited",
					 (int)req->pid);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot record a run: %s", strerror(-r));
	if (!target)
		session_use_learned_stack_size(s, caller, &sampling);
	r = session_open_collector(s, caller, req, &sampling, error);
	if (r < 0)
		return r;
	collector_get_metrics(s->collector, &sm);
	r = session_take_metrics(s, &sm);
	if (r >= 0)
		r = session_run_sampling(s->recorder, &sampling, &s->metrics);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot start a session: %s", strerror(-r));

	r = session_save(s);
	if (r < 0)
		log_warning("cannot save session %s in '%s': %s", s->id, s->dir, strerror(-r));

	r = manager_add_session(m, s);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot add the session: %s", strerror(-r));
	log_info("session %s: uid %u samples %s (%s) at %" PRIu32 " Hz for %" PRIu64
		 " ms with %s/%s", s->id, (unsigned)s->owner, s->target, comm ?: "many processes",
		 s->hz, s->effective_duration_nanos / 1000000, s->backend, s->event);
	*ret = TAKE_PTR(s);
	return 0;
}

/* Every file a session directory may hold: the properties first, so a crash half way
 * leaves nothing that looks like a complete session. */
static void session_remove_files(Session *s)
{
	_cleanup_close_ int dir_fd = session_open_dir(s);
	int r;

	if (dir_fd >= 0) {
		unlinkat(dir_fd, SESSION_FILE, 0);
		unlinkat(dir_fd, SESSION_PROFILE_FILE, 0);
		for (ExportFormat f = 0; f < _EXPORT_FORMAT_MAX; f++)
			unlinkat(dir_fd, export_format_to_string(f), 0);
	}
	r = unlink_durable(s->manager->sessions_fd, s->id, AT_REMOVEDIR);
	if (r < 0)
		log_warning("cannot remove '%s': %s", s->dir, strerror(-r));
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

/* A session saved by an earlier profd. */
static int session_load_one(Manager *m, const char *id, Session **ret, const char **ret_reason)
{
	_cleanup_(session_freep) Session *s = NULL;
	_cleanup_free_ char *metrics = NULL;
	_cleanup_close_ int dir_fd = -1;
	size_t size;
	int r;

	r = session_new(m, id, &s);
	if (r < 0)
		return r;
	dir_fd = session_open_dir(s);
	if (dir_fd < 0) {
		*ret_reason = "not a directory of profd's own";
		return dir_fd;
	}
	r = session_file_read(dir_fd, s->id, &s->props, ret_reason);
	if (r < 0)
		return r;
	/* saved before sessions had other targets than a pid */
	if (!s->target && s->pid > 0 && asprintf(&s->target, "pid:%d", (int)s->pid) < 0)
		return -ENOMEM;
	s->metrics.backend = s->backend;
	s->metrics.event = s->event;
	if (session_is_busy(s)) {
		/* the daemon died while this session ran: its profile is lost */
		s->state = SESSION_FAILED;
		session_properties_update_duration(&s->props);
		r = session_properties_set_string(&s->error,
						  "interrupted: profd stopped before the session finished");
		if (r < 0)
			return r;
		r = session_file_write(dir_fd, &s->props);
		if (r < 0)
			log_warning("cannot update '%s/" SESSION_FILE "': %s", s->dir, strerror(-r));
	}
	/* with a stack-quality report of long module paths, 128 KiB at most */
	if (read_file_at(dir_fd, export_format_to_string(EXPORT_METRICS), 256 * 1024, &metrics,
			 &size) == 0)
		s->metrics_json = TAKE_PTR(metrics);
	*ret = TAKE_PTR(s);
	return 0;
}

static int compare_created(const void *a, const void *b)
{
	const Session *x = *(Session *const *)a, *y = *(Session *const *)b;

	return x->created_usec < y->created_usec ? -1 : x->created_usec > y->created_usec;
}

static bool is_session_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == SESSION_ID_LENGTH && s[n] == '\0';
}

int session_load_all(Manager *m)
{
	struct dirent *de;
	DIR *d;
	int r;

	r = dir_fd_open_stream(m->sessions_fd, &d);
	if (r < 0)
		return r;
	while ((de = readdir(d))) {
		Session *s = NULL;
		const char *reason = NULL;
		int k;

		if (!is_session_id(de->d_name))
			continue;
		k = session_load_one(m, de->d_name, &s, &reason);
		if (k == -ENOMEM) {
			r = k;
			break;
		}
		if (k < 0) {
			int e = set_aside_corrupt(m->sessions_fd, de->d_name);

			if (e < 0)
				log_error("saved session '%s' cannot be loaded (%s) nor set aside: %s",
					  de->d_name, reason ?: strerror(-k), strerror(-e));
			else
				log_warning("set aside saved session '%s' as %s.corrupt: %s", de->d_name,
					    de->d_name, reason ?: strerror(-k));
			continue;
		}
		k = manager_add_session(m, s);
		if (k < 0) {
			session_free(s);
			r = k;
			break;
		}
	}
	closedir(d);
	if (r < 0)
		return r;
	if (m->n_sessions > 1)
		qsort(m->sessions, m->n_sessions, sizeof(*m->sessions), compare_created);
	return 0;
}
