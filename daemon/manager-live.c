/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live runs on the Manager object (manager.c's vtable): BeginRun samples the
 * calling program itself and hands it a span ring; FinishRun takes its
 * record, ends the window and answers once the joined record is stored.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "bus-errors.h"
#include "caller-text.h"
#include "cleanup.h"
#include "live-record.h"
#include "live-run.h"
#include "log.h"
#include "manager-call.h"
#include "manager-live.h"
#include "manager-runs.h"
#include "run-store.h"
#include "session.h"
#include "span-ring.h"
#include "time-util.h"

#define RUN_THREADS_DEFAULT 128U
#define RUN_THREADS_MAX 1024U
#define RUN_SPANS_PER_THREAD_DEFAULT 8192U
#define RUN_SPANS_PER_THREAD_MIN 64U
#define RUN_SPANS_PER_THREAD_MAX 65536U
/*
 * The most shared memory one run's ring may take: the program fills it, but
 * profd's reads fault its pages in (charged to profd, mapped until the run's
 * sampling ends), so the caller must not choose it freely. The default
 * geometry takes 24 MiB.
 */
#define RUN_RING_MAX_BYTES ((size_t)32 << 20)

typedef struct RunRequest {
	SessionRequest session;
	int kernel;
	const char *run_id; /* NULL: profd makes one */
	uint32_t threads, spans_per_thread;
} RunRequest;

static int run_option(sd_bus_message *msg, const char *key, void *userdata, sd_bus_error *error)
{
	RunRequest *req = userdata;

	if (strcmp(key, "hz") == 0)
		return manager_read_option(msg, key, 'u', &req->session.hz, error) ?: 1;
	if (strcmp(key, "duration_usec") == 0)
		return manager_read_option(msg, key, 't', &req->session.duration_usec, error) ?: 1;
	if (strcmp(key, "run_id") == 0)
		return manager_read_option(msg, key, 's', &req->run_id, error) ?: 1;
	if (strcmp(key, "threads") == 0)
		return manager_read_option(msg, key, 'u', &req->threads, error) ?: 1;
	if (strcmp(key, "spans_per_thread") == 0)
		return manager_read_option(msg, key, 'u', &req->spans_per_thread, error) ?: 1;
	return manager_read_session_option(msg, key, &req->session, &req->kernel, error);
}

static int validate_run_request(const RunRequest *req, sd_bus_error *error)
{
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	size_t size;
	int r;

	r = manager_validate_session_request(&req->session, error);
	if (r < 0)
		return r;
	if (req->run_id) {
		r = caller_text_check(req->run_id, CALLER_TEXT_MAX);
		if (r < 0 || !*req->run_id)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "run_id '%s' is empty, longer than %d bytes or has "
						 "control characters", caller_text_quote(req->run_id, quoted),
						 CALLER_TEXT_MAX);
	}
	if (req->threads == 0 || req->threads > RUN_THREADS_MAX)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "threads %" PRIu32 " is not in 1..%u", req->threads,
					 RUN_THREADS_MAX);
	if (req->spans_per_thread < RUN_SPANS_PER_THREAD_MIN ||
	    req->spans_per_thread > RUN_SPANS_PER_THREAD_MAX ||
	    (req->spans_per_thread & (req->spans_per_thread - 1)) != 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "spans_per_thread %" PRIu32 " is not a power of two in %u..%u",
					 req->spans_per_thread, RUN_SPANS_PER_THREAD_MIN,
					 RUN_SPANS_PER_THREAD_MAX);
	if (span_ring_geometry_size(&(SpanRingGeometry){ .n_slots = req->threads,
							 .slot_records = req->spans_per_thread },
				    &size) < 0 || size > RUN_RING_MAX_BYTES)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "a ring of %" PRIu32 " threads x %" PRIu32 " spans takes more "
					 "than %zu MiB; ask for fewer threads or spans_per_thread",
					 req->threads, req->spans_per_thread, RUN_RING_MAX_BYTES >> 20);
	return 0;
}

/* The live run in progress (sampling) of process 'pid', or with 'run_id' of 'owner'. */
static Session *find_live_in_progress(Manager *m, pid_t pid, uid_t owner, const char *run_id)
{
	for (size_t i = 0; i < m->n_sessions; i++) {
		Session *s = m->sessions[i];

		if (!s->live || s->state != SESSION_SAMPLING)
			continue;
		if (s->pid == pid || (run_id && s->owner == owner && strcmp(s->live->run_id, run_id) == 0))
			return s;
	}
	return NULL;
}

/* "<pid>-<unix ns>-<sequence>", the shape of the record library's run ids. */
static int make_run_id(pid_t pid, char **ret)
{
	static uint64_t sequence;

	return asprintf(ret, "%d-%" PRIu64 "-%" PRIu64, (int)pid, clock_nanos(CLOCK_REALTIME),
			sequence++) < 0 ? -ENOMEM : 0;
}

/* profd's own record of the run: under the run's id, a live run of the program. */
static int name_run(Session *s, const char *run_id)
{
	RunIdentity *id = run_recorder_identity(s->recorder);
	int r;

	r = run_identity_set_string(&id->run_id, run_id);
	if (r >= 0)
		r = run_identity_set_string(&id->source_kind, "live");
	return r;
}

int manager_method_begin_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_free_ char *made_id = NULL;
	_cleanup_close_ int memfd = -1;
	Manager *m = userdata;
	RunRequest req = { .kernel = -1, .threads = RUN_THREADS_DEFAULT,
			   .spans_per_thread = RUN_SPANS_PER_THREAD_DEFAULT };
	const char *run_id;
	Session *s, *other;
	uid_t uid;
	pid_t pid;
	int r;

	/* parse */
	r = manager_parse_options(msg, run_option, &req,
				  "hz, duration_usec, run_id, threads, spans_per_thread, "
				  MANAGER_SESSION_OPTIONS, error);
	if (r < 0)
		return r;
	/* validate */
	r = validate_run_request(&req, error);
	if (r < 0)
		return r;
	/* check access: the caller's own process, as the bus daemon knows it */
	r = access_sender_uid(msg, &uid);
	if (r >= 0)
		r = access_sender_pid(msg, &pid);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot tell which process is calling: %s",
					       strerror(-r));
	other = find_live_in_progress(m, pid, uid, req.run_id);
	if (other && other->pid == pid)
		return sd_bus_error_setf(error, PROFD_ERROR_RUN_IN_PROGRESS,
					 "process %d has live run '%s' in progress; finish it "
					 "(FinishRun) before beginning another", (int)pid,
					 other->live->run_id);
	if (other)
		return sd_bus_error_setf(error, PROFD_ERROR_RUN_IN_PROGRESS,
					 "a live run with this run_id is in progress in process %d",
					 (int)other->pid);
	run_id = req.run_id;
	if (!run_id) {
		r = make_run_id(pid, &made_id);
		if (r < 0)
			return r;
		run_id = made_id;
	}
	/* a run's own defaults: its own rate and ceiling, the whole ceiling unless asked */
	req.session.pid = pid;
	req.session.hz = req.session.hz ?: m->config.default_run_hz;
	req.session.max_duration_usec = m->config.max_run_duration_usec;
	req.session.duration_usec = req.session.duration_usec ?: m->config.max_run_duration_usec;
	req.session.min_threads = req.threads;
	/* act */
	r = manager_start_session(m, msg, &req.session, req.kernel, &s, error);
	if (r < 0)
		return r;
	r = name_run(s, run_id);
	if (r >= 0)
		r = live_run_new(s,
				 &(LiveRunOptions){ .geometry = { .n_slots = req.threads,
								  .slot_records = req.spans_per_thread },
						    .max_spans = m->config.max_run_spans,
						    .run_id = run_id },
				 &memfd, &s->live);
	if (r < 0) {
		session_release(s);
		return sd_bus_error_set_errnof(error, r, "cannot set up the live run: %s",
					       strerror(-r));
	}
	log_info("live run %s: session %s of pid %d (uid %u), a ring of %" PRIu32 " x %" PRIu32
		 " spans", run_id, s->id, (int)pid, (unsigned)uid, req.threads, req.spans_per_thread);
	/* reply */
	return sd_bus_reply_method_return(msg, "soh", run_id, s->path, memfd);
}

/* The run 'run_id' the sender of 'msg' may finish: its own (root: anyone's), the newest. */
static Session *find_live_run(Manager *m, uid_t uid, const char *run_id)
{
	for (size_t i = m->n_sessions; i > 0; i--) {
		Session *s = m->sessions[i - 1];

		if (s->live && strcmp(s->live->run_id, run_id) == 0 &&
		    access_check_owner(uid, s->owner) == 0)
			return s;
	}
	return NULL;
}

/*
 * profd's own record of a live run it no longer samples, stored as failed
 * (it restarted, or the session went away), that 'uid' may finish.
 */
static const StoredRun *find_stored_live_run(Manager *m, uid_t uid, const char *run_id)
{
	const StoredRun *run = run_store_find(m->runs, uid, run_id);

	if (!run || !stored_run_visible(run) || run->status != RUN_STATE_FAILED ||
	    !run->source_kind || strcmp(run->source_kind, "live") != 0 ||
	    access_check_owner(uid, run->owner) < 0)
		return NULL;
	return run;
}

/* Why run 's' cannot be finished any more, or 0. */
static int check_finishable(const Session *s, sd_bus_error *error)
{
	if (s->state == SESSION_SAMPLING && !s->live->finishing)
		return 0;
	if (s->live->finishing)
		return sd_bus_error_setf(error, PROFD_ERROR_RUN_ENDED,
					 "live run '%s' is being finished already", s->live->run_id);
	return sd_bus_error_setf(error, PROFD_ERROR_RUN_ENDED,
				 "live run '%s' ended before FinishRun (%s) and is being stored; "
				 "try again to have the record adopt what profd captured", s->live->run_id,
				 s->metrics.end_reason && strcmp(s->metrics.end_reason, "duration") == 0
					 ? "its deadline passed" : s->metrics.end_reason ?: "ended");
}

/*
 * FinishRun's record, parsed on a worker like SubmitRun's. When profd no
 * longer samples the run but stored it as failed (its deadline passed, profd
 * restarted meanwhile), the program's record adopts what profd stored.
 */
typedef struct FinishParse {
	ManagerCall call;
	char session_id[SESSION_ID_LENGTH + 1];
	const char *run_id, *input; /* in 'message' */
	size_t input_size;
	RunProfile *record;
	char *why;
	int error;
	/* adopting a stored run: its owner, file (seq) or record in memory (run_store_json()) */
	bool adopt;
	uid_t owner;
	uint64_t seq;
	char *stored_json;
} FinishParse;

static FinishParse *finish_parse_free(FinishParse *j)
{
	if (!j)
		return NULL;
	manager_call_release(&j->call);
	run_profile_free(j->record);
	free(j->why);
	free(j->stored_json);
	free(j);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(FinishParse *, finish_parse_free);

/* profd's stored record of the run into the program's (worker). */
static int adopt_stored(FinishParse *j)
{
	_cleanup_run_profile_ RunProfile *stored = NULL;
	_cleanup_free_ char *why = NULL;
	size_t size;
	int r;

	if (!j->stored_json) {
		r = run_store_read(j->call.manager->runs, j->seq, RUN_STORE_FILE_MAX, &j->stored_json,
				   &size);
		if (r < 0)
			return r;
	}
	r = record_parse(j->stored_json, strlen(j->stored_json), &stored, &why);
	if (r < 0)
		return r == -ENOMEM ? r : -EIO; /* profd wrote it: not the caller's fault */
	return live_record_adopt(j->record, stored);
}

static void finish_parse_work(void *userdata)
{
	FinishParse *j = userdata;

	j->error = manager_check_record(j->call.manager, j->input, j->input_size, &j->record, NULL,
					&j->why);
	if (j->error == 0 && j->adopt && strcmp(j->record->identity.run_id, j->run_id) == 0)
		j->error = adopt_stored(j);
}

/* The adopted record is on disk (or not): only now is FinishRun answered. */
static void adopted_saved(int error, void *userdata)
{
	FinishParse *j = userdata;

	live_finish_answer(&j->call, error);
	finish_parse_free(j);
}

static void finish_parse_done(void *userdata)
{
	_cleanup_(finish_parse_freep) FinishParse *j = userdata;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	Session *s = manager_find_session(j->call.manager, j->session_id);
	int r = j->error;

	if (r == -EINVAL || r == -E2BIG || r == -EILSEQ)
		sd_bus_error_setf(&error, PROFD_ERROR_INVALID_RECORD, "%s",
				  j->why ?: "not a keyhog-profile-v1 record");
	else if (r < 0)
		sd_bus_error_set_errnof(&error, r, "cannot read the record: %s", strerror(-r));
	else if (strcmp(j->record->identity.run_id, j->run_id) != 0)
		sd_bus_error_setf(&error, PROFD_ERROR_INVALID_RECORD,
				  "the record's identity.run_id '%s' is not the run's '%s'",
				  caller_text_quote(j->record->identity.run_id, quoted), j->run_id);
	else if (j->adopt) {
		r = run_store_put(j->call.manager->runs, j->record, j->owner,
				  clock_nanos(CLOCK_REALTIME) / 1000, NULL, adopted_saved, j);
		if (r < 0)
			sd_bus_error_set_errnof(&error, r, "cannot store the run: %s", strerror(-r));
		else {
			TAKE_PTR(j); /* adopted_saved() answers */
			return;
		}
	} else if (!s || !s->live)
		sd_bus_error_setf(&error, PROFD_ERROR_RUN_ENDED, "live run '%s' went away meanwhile",
				  j->run_id);
	else
		(void)check_finishable(s, &error);
	if (sd_bus_error_is_set(&error)) {
		(void)sd_bus_reply_method_error(j->call.message, &error);
		return;
	}
	/* the run answers once its record is stored; the request stays charged till then */
	live_run_finish(s->live, TAKE_PTR(j->record), manager_call_take(&j->call));
}

int manager_method_finish_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(finish_parse_freep) FinishParse *j = NULL;
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	Manager *m = userdata;
	const StoredRun *stored;
	const char *run_id, *json;
	Session *s;
	uid_t uid;
	int r;

	/* parse, validate */
	r = sd_bus_message_read(msg, "ss", &run_id, &json);
	if (r < 0)
		return r;
	if (strlen(json) > m->config.max_record_bytes)
		return sd_bus_error_setf(error, PROFD_ERROR_INVALID_RECORD,
					 "record is %zu bytes, more than the limit of %" PRIu64
					 " (MaxRecordBytes)", strlen(json), m->config.max_record_bytes);
	/* check access: another user's run is one that does not exist */
	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	s = find_live_run(m, uid, run_id);
	stored = NULL;
	if (!s || (s->state != SESSION_SAMPLING && !s->live->finishing)) {
		/* its sampling ended (deadline, profd's restart): once stored, the record is adopted */
		stored = find_stored_live_run(m, uid, run_id);
		if (!stored && !s)
			return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_RUN,
						 "no live run '%s' (it never began; SubmitRun stores a "
						 "record without samples)", caller_text_quote(run_id, quoted));
		if (stored)
			s = NULL;
	}
	if (s) {
		r = check_finishable(s, error);
		if (r < 0)
			return r;
	}
	/* act: parse the record off the loop, then end the window */
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	*j = (FinishParse){ .run_id = run_id, .input = json, .input_size = strlen(json) };
	manager_call_init(&j->call, m, msg);
	r = manager_call_count(&j->call, error);
	if (r < 0)
		return r;
	if (s)
		memcpy(j->session_id, s->id, sizeof(j->session_id));
	else {
		const char *stored_json = run_store_json(m->runs, stored);

		j->adopt = true;
		j->owner = stored->owner;
		j->seq = stored->seq;
		if (stored_json && !(j->stored_json = strdup(stored_json)))
			return -ENOMEM;
	}
	r = worker_pool_submit(m->export_workers, finish_parse_work, finish_parse_done, j);
	if (r < 0)
		return r;
	TAKE_PTR(j);
	return 1; /* answered once the record is stored, or refused */
}
