/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "access.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "export-stream.h"
#include "log.h"
#include "manager.h"
#include "session.h"

static int mkdir_parents(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return negative_errno();
			*s = '/';
		}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return negative_errno();
	return 0;
}

/* A sanity bound for reading run files back. */
#define RUN_FILE_MAX_BYTES ((size_t)128 << 20)

static void log_corrupt_run(const char *path, const char *reason, void *userdata)
{
	log_warning("set aside run record '%s' as %s.corrupt: %s", path, path, reason);
}

static int manager_pick_state_dir(Manager *m)
{
	const char *env = getenv("STATE_DIRECTORY");
	const char *dir = m->config.state_dir;

	if (!dir && env && *env)
		dir = env; /* systemd's StateDirectory=; with several, the first is ours */
	if (!dir)
		dir = CONFIG_DEFAULT_STATE_DIR;
	m->state_dir = strndup(dir, strcspn(dir, ":"));
	if (!m->state_dir)
		return -ENOMEM;
	if (asprintf(&m->sessions_dir, "%s/sessions", m->state_dir) < 0)
		return -ENOMEM;
	return 0;
}

int manager_new(sd_event *event, Config *config, Manager **ret)
{
	_cleanup_(manager_freep) Manager *m = NULL;
	_cleanup_free_ char *runs_dir = NULL;
	uint32_t kernel_max;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->event = sd_event_ref(event);
	m->config = *config;
	*config = (Config){};

	r = manager_pick_state_dir(m);
	if (r < 0)
		return r;
	r = mkdir_parents(m->state_dir, 0700);
	if (r < 0)
		return log_error_errno(r, "cannot create state directory '%s': %s", m->state_dir,
				       strerror(-r));
	if (mkdir(m->sessions_dir, 0700) < 0 && errno != EEXIST)
		return log_error_errno(negative_errno(), "cannot create '%s': %m", m->sessions_dir);

	m->max_hz = m->config.max_hz;
	if (sampling_max_hz(&kernel_max) == 0 && kernel_max < m->max_hz)
		m->max_hz = kernel_max;

	if (asprintf(&runs_dir, "%s/runs", m->state_dir) < 0)
		return -ENOMEM;
	r = run_store_new(runs_dir, m->config.max_runs, event, &m->runs);
	if (r < 0)
		return log_error_errno(r, "cannot open run store '%s': %s", runs_dir, strerror(-r));
	/* not MaxRecordBytes: lowering it must not turn stored runs into "corrupt" ones */
	r = run_store_load(m->runs, RUN_FILE_MAX_BYTES, log_corrupt_run, NULL);
	if (r < 0)
		return log_error_errno(r, "cannot load run store '%s': %s", runs_dir, strerror(-r));
	log_info("loaded %d run records from '%s'", r, runs_dir);
	r = session_load_all(m);
	if (r < 0)
		return log_error_errno(r, "cannot load saved sessions from '%s': %s", m->sessions_dir,
				       strerror(-r));
	manager_trim_finished_sessions(m);

	r = worker_pool_new(event, 2, &m->workers);
	if (r >= 0)
		r = worker_pool_new(event, 4, &m->export_workers);
	if (r < 0)
		return log_error_errno(r, "cannot start worker threads: %s", strerror(-r));
	r = symbol_cache_new(&m->symbols);
	if (r < 0)
		return log_error_errno(r, "cannot create the symbol cache: %s", strerror(-r));
	*ret = TAKE_PTR(m);
	return 0;
}

Manager *manager_free(Manager *m)
{
	if (!m)
		return NULL;
	/* completions first: they still use the sessions and the bus */
	worker_pool_free(m->workers);
	worker_pool_free(m->export_workers);
	export_stream_cancel_all();
	for (size_t i = 0; i < m->n_sessions; i++)
		session_free(m->sessions[i]);
	free(m->sessions);
	run_store_free(m->runs);
	symbol_cache_free(m->symbols);
	sd_bus_flush_close_unref(m->bus);
	sd_event_unref(m->event);
	config_done(&m->config);
	free(m->state_dir);
	free(m->sessions_dir);
	free(m);
	return NULL;
}

void manager_freep(Manager **m)
{
	manager_free(*m);
}

int manager_add_session(Manager *m, Session *s)
{
	if (m->n_sessions == m->n_allocated) {
		size_t n = m->n_allocated ? m->n_allocated * 2 : 16;
		Session **a = realloc(m->sessions, n * sizeof(*a));

		if (!a)
			return -ENOMEM;
		m->sessions = a;
		m->n_allocated = n;
	}
	m->sessions[m->n_sessions++] = s;
	return 0;
}

void manager_remove_session(Manager *m, Session *s)
{
	for (size_t i = 0; i < m->n_sessions; i++)
		if (m->sessions[i] == s) {
			memmove(m->sessions + i, m->sessions + i + 1,
				(m->n_sessions - i - 1) * sizeof(*m->sessions));
			m->n_sessions--;
			return;
		}
}

Session *manager_find_session(Manager *m, const char *id)
{
	for (size_t i = 0; i < m->n_sessions; i++)
		if (strcmp(m->sessions[i]->id, id) == 0)
			return m->sessions[i];
	return NULL;
}

unsigned manager_count_busy_sessions(Manager *m, uid_t uid)
{
	unsigned n = 0;

	for (size_t i = 0; i < m->n_sessions; i++)
		if (session_is_busy(m->sessions[i]) &&
		    (uid == (uid_t)-1 || m->sessions[i]->owner == uid))
			n++;
	return n;
}

void manager_trim_finished_sessions(Manager *m)
{
	size_t finished = 0;

	for (size_t i = 0; i < m->n_sessions; i++)
		finished += !session_is_busy(m->sessions[i]);
	for (size_t i = 0; finished > m->config.max_finished_sessions && i < m->n_sessions;) {
		Session *s = m->sessions[i];

		if (session_is_busy(s)) {
			i++;
			continue;
		}
		log_info("releasing session %s: more than %" PRIu32 " finished sessions are kept",
			 s->id, m->config.max_finished_sessions);
		session_release(s); /* removes it from the array: i stays */
		finished--;
	}
}

void manager_update_status(Manager *m)
{
	sd_notifyf(false, "STATUS=%u sessions sampling, %zu finished, %zu runs stored",
		   manager_count_busy_sessions(m, (uid_t)-1),
		   m->n_sessions - manager_count_busy_sessions(m, (uid_t)-1),
		   run_store_count(m->runs));
}

void manager_begin_stop(Manager *m)
{
	if (!m->stopping) {
		log_info("stopping: ending %u running sessions", manager_count_busy_sessions(m, (uid_t)-1));
		sd_notify(false, "STOPPING=1\nSTATUS=saving running sessions");
	}
	m->stopping = true;
	for (size_t i = 0; i < m->n_sessions; i++)
		session_stop(m->sessions[i]);
	manager_check_idle(m);
}

void manager_check_idle(Manager *m)
{
	if (m->stopping && manager_count_busy_sessions(m, (uid_t)-1) == 0)
		sd_event_exit(m->event, 0);
}

/* ---- org.profd.Profiler1.Manager ---- */

static int read_option(sd_bus_message *msg, const char *key, char type, void *ret,
		       sd_bus_error *error)
{
	const char *contents;
	char want[2] = { type, 0 };
	int r;

	r = sd_bus_message_peek_type(msg, NULL, &contents);
	if (r < 0)
		return r;
	if (strcmp(contents, want) != 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "option '%s' must be of type '%s', not '%s'", key, want,
					 contents);
	r = sd_bus_message_enter_container(msg, 'v', want);
	if (r < 0)
		return r;
	r = sd_bus_message_read_basic(msg, type, ret);
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(msg);
}

static int parse_options(sd_bus_message *msg, SessionRequest *req, sd_bus_error *error)
{
	int r;

	r = sd_bus_message_enter_container(msg, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
		const char *key;
		int b;

		r = sd_bus_message_read(msg, "s", &key);
		if (r < 0)
			return r;
		if (strcmp(key, "backend") == 0)
			r = read_option(msg, key, 's', &req->backend, error);
		else if (strcmp(key, "event") == 0)
			r = read_option(msg, key, 's', &req->event, error);
		else if (strcmp(key, "workload_class") == 0)
			r = read_option(msg, key, 's', &req->workload_class, error);
		else if (strcmp(key, "kernel") == 0) {
			r = read_option(msg, key, 'b', &b, error);
			req->kernel = b;
		} else if (strcmp(key, "stop_on_disconnect") == 0) {
			r = read_option(msg, key, 'b', &b, error);
			req->stop_on_disconnect = b;
		} else if (strcmp(key, "stack_bytes") == 0)
			r = read_option(msg, key, 'u', &req->stack_bytes, error);
		else if (strcmp(key, "ring_capacity") == 0)
			r = read_option(msg, key, 't', &req->ring_capacity, error);
		else
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "unknown option '%s' (known: backend, event, kernel, "
						 "stack_bytes, ring_capacity, workload_class, "
						 "stop_on_disconnect)", key);
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(msg);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(msg);
}

static int validate_request(const SessionRequest *req, sd_bus_error *error)
{
	int r;

	if (req->backend) {
		r = sampling_backend_check(req->backend);
		if (r == -EOPNOTSUPP)
			return sd_bus_error_setf(error, PROFD_ERROR_UNSUPPORTED,
						 "backend '%s' is not available yet; use 'perf-dwarf' "
						 "or 'perf-fp'", req->backend);
		if (r < 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "unknown backend '%s' (known: auto, perf-dwarf, "
						 "perf-fp)", req->backend);
	}
	if (req->event) {
		r = sampling_event_check(req->event);
		if (r == -EOPNOTSUPP)
			return sd_bus_error_setf(error, PROFD_ERROR_UNSUPPORTED,
						 "event '%s' is not supported on this machine",
						 req->event);
		if (r < 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "unknown event '%s' (known: cpu-clock, task-clock, "
						 "cycles)", req->event);
	}
	if (req->stack_bytes > SAMPLING_MAX_STACK_BYTES)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "stack_bytes %" PRIu32 " is more than the kernel's %u",
					 req->stack_bytes, SAMPLING_MAX_STACK_BYTES);
	return 0;
}

static int method_start_session(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_close_ int pidfd = -1;
	Manager *m = userdata;
	SessionRequest req = { .kernel = true };
	TargetInfo target;
	Session *s;
	uint32_t pid;
	uid_t uid;
	int r;

	/* parse */
	r = sd_bus_message_read(msg, "uut", &pid, &req.hz, &req.duration_usec);
	if (r < 0)
		return r;
	if (pid == 0 || pid > INT32_MAX)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "pid %" PRIu32 " is not a process id; give the pid to profile",
					 pid);
	req.pid = (pid_t)pid;
	r = parse_options(msg, &req, error);
	if (r < 0)
		return r;
	/* validate */
	r = validate_request(&req, error);
	if (r < 0)
		return r;
	if (m->stopping)
		return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY, "profd is shutting down");
	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	/* check access and limits */
	if (manager_count_busy_sessions(m, (uid_t)-1) >= m->config.max_sessions)
		return sd_bus_error_setf(error, PROFD_ERROR_TOO_MANY_SESSIONS,
					 "%" PRIu32 " sessions are running, the limit (MaxSessions); "
					 "wait for one to finish", m->config.max_sessions);
	if (manager_count_busy_sessions(m, uid) >= m->config.max_sessions_per_user)
		return sd_bus_error_setf(error, PROFD_ERROR_TOO_MANY_SESSIONS,
					 "uid %u has %" PRIu32 " sessions running, the limit "
					 "(MaxSessionsPerUser); stop one first",
					 (unsigned)uid, m->config.max_sessions_per_user);
	pidfd = pidfd_open_pid(req.pid);
	if (pidfd == -ESRCH)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS, "no process with pid %d",
					 (int)req.pid);
	if (pidfd < 0)
		return pidfd;
	r = target_info_read(req.pid, &target);
	if (r == 0)
		r = pidfd_check_alive(pidfd); /* what we read was about the pidfd's process */
	if (r == -ESRCH)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS,
					 "process %d has exited", (int)req.pid);
	if (r < 0)
		return r;
	if (access_check_target(uid, &target) < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "uid %u may not profile process %d: %s", (unsigned)uid,
					 (int)req.pid,
					 target.ruid != uid || target.euid != uid
						 ? "it runs as another user"
						 : "it is not dumpable");
	/* act */
	r = session_start(m, uid, &req, target.comm, TAKE_FD(pidfd), &s, error);
	if (r < 0)
		return r;
	if (req.stop_on_disconnect) {
		r = session_stop_on_disconnect(s, msg);
		if (r < 0) {
			/* cannot honour it: do not leave a session the client did not want running */
			session_release(s);
			return sd_bus_error_set_errnof(error, r, "cannot watch the client: %s",
						       strerror(-r));
		}
	}
	manager_update_status(m);
	/* reply */
	return sd_bus_reply_method_return(msg, "so", s->id, s->path);
}

/* Reply with an array of 'element' that append() fills with what the sender may see. */
static int reply_visible_array(sd_bus_message *msg, const Manager *m, const char *element,
			       int (*append)(sd_bus_message *reply, const Manager *m, uid_t uid))
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	uid_t uid;
	int r;

	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', element);
	if (r >= 0)
		r = append(reply, m, uid);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

static int append_sessions(sd_bus_message *reply, const Manager *m, uid_t uid)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < m->n_sessions; i++) {
		Session *s = m->sessions[i];

		if (access_check_owner(uid, s->owner) == 0)
			r = sd_bus_message_append(reply, "(sous)", s->id, s->path, (uint32_t)s->pid,
						  session_state_to_string(s->state));
	}
	return r;
}

static int method_list_sessions(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return reply_visible_array(msg, userdata, "(sous)", append_sessions);
}

static int append_runs(sd_bus_message *reply, const Manager *m, uid_t uid)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < run_store_count(m->runs); i++) {
		const StoredRun *run = run_store_at(m->runs, i);

		if (access_check_owner(uid, run->owner) == 0)
			r = sd_bus_message_append(reply, "(sssstt)", run->run_id,
						  run_state_to_string(run->status), run->source_kind,
						  run->workload_class, run->wall_time_ns,
						  run->finished_usec);
	}
	return r;
}

static int method_list_runs(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return reply_visible_array(msg, userdata, "(sssstt)", append_runs);
}

/* The run msg names if the sender may see it; otherwise NoSuchRun, as if it did not exist. */
static int read_visible_run(Manager *m, sd_bus_message *msg, const StoredRun **ret,
			    sd_bus_error *error)
{
	const StoredRun *run;
	const char *id;
	uid_t uid;
	int r;

	r = sd_bus_message_read(msg, "s", &id);
	if (r < 0)
		return r;
	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	run = run_store_get(m->runs, id);
	if (!run || access_check_owner(uid, run->owner) < 0)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_RUN, "no run '%s'", id);
	*ret = run;
	return 0;
}

static int method_get_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	const StoredRun *run;
	int r;

	r = read_visible_run(userdata, msg, &run, error);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(msg, "s", run->json);
}

static uint64_t now_realtime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

typedef struct SubmitReply {
	sd_bus_message *message;
	char *run_id;
} SubmitReply;

/* The record is on disk: only now does the client hear it was stored. */
static void submit_run_saved(int error, void *userdata)
{
	SubmitReply *s = userdata;

	if (error < 0)
		sd_bus_reply_method_errnof(s->message, error, "cannot save run '%s': %s", s->run_id,
					   strerror(-error));
	else
		sd_bus_reply_method_return(s->message, "s", s->run_id);
	sd_bus_message_unref(s->message);
	free(s->run_id);
	free(s);
}

static int method_submit_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_run_profile_ RunProfile *p = NULL;
	_cleanup_free_ char *why = NULL;
	Manager *m = userdata;
	SubmitReply *reply;
	const char *json;
	size_t len;
	uid_t uid;
	int r;

	r = sd_bus_message_read(msg, "s", &json);
	if (r < 0)
		return r;
	len = strlen(json);
	if (len > m->config.max_record_bytes)
		return sd_bus_error_setf(error, PROFD_ERROR_INVALID_RECORD,
					 "record is %zu bytes, more than the limit of %" PRIu64
					 " (MaxRecordBytes)", len, m->config.max_record_bytes);
	r = record_parse(json, len, &p, &why);
	if (r == -EINVAL)
		return sd_bus_error_setf(error, PROFD_ERROR_INVALID_RECORD, "%s",
					 why ?: "not a keyhog-profile-v1 record");
	if (r < 0)
		return r;
	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	reply = calloc(1, sizeof(*reply));
	if (!reply || !(reply->run_id = strdup(p->identity.run_id))) {
		free(reply);
		return -ENOMEM;
	}
	reply->message = sd_bus_message_ref(msg);
	r = run_store_put(m->runs, p, uid, now_realtime_usec(), NULL, submit_run_saved, reply);
	if (r < 0) {
		sd_bus_message_unref(reply->message);
		free(reply->run_id);
		free(reply);
	}
	if (r == -EPERM)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "run id '%s' belongs to another user", p->identity.run_id);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot store run '%s': %s",
					       p->identity.run_id, strerror(-r));
	manager_update_status(m);
	return 1; /* submit_run_saved() replies */
}

static int method_delete_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	const StoredRun *run;
	int r;

	r = read_visible_run(m, msg, &run, error);
	if (r < 0)
		return r;
	r = run_store_delete(m->runs, run->run_id);
	if (r < 0)
		return r;
	manager_update_status(m);
	return sd_bus_reply_method_return(msg, NULL);
}

static int property_get(sd_bus *bus, const char *path, const char *interface,
			const char *property, sd_bus_message *reply, void *userdata,
			sd_bus_error *error)
{
	Manager *m = userdata;
	int r;

	if (strcmp(property, "Version") == 0)
		return sd_bus_message_append(reply, "s", PROFD_VERSION);
	if (strcmp(property, "DefaultHz") == 0)
		return sd_bus_message_append(reply, "u", SAMPLING_DEFAULT_HZ);
	if (strcmp(property, "MaxHz") == 0)
		return sd_bus_message_append(reply, "u", m->max_hz);
	if (strcmp(property, "MaxDurationUSec") == 0)
		return sd_bus_message_append(reply, "t", m->config.max_duration_usec);
	if (strcmp(property, "Backends") == 0) {
		static const char *const backends[] = { "auto", "perf-dwarf", "perf-fp", "bpf" };

		r = sd_bus_message_open_container(reply, 'a', "s");
		for (size_t i = 0; r >= 0 && i < ELEMENTSOF(backends); i++)
			if (sampling_backend_check(backends[i]) == 0)
				r = sd_bus_message_append(reply, "s", backends[i]);
		if (r < 0)
			return r;
		return sd_bus_message_close_container(reply);
	}
	return -ENOENT;
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Version", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Backends", "as", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("DefaultHz", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("MaxHz", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("MaxDurationUSec", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_METHOD_WITH_ARGS("StartSession",
				SD_BUS_ARGS("u", pid, "u", hz, "t", duration_usec, "a{sv}", options),
				SD_BUS_RESULT("s", id, "o", session), method_start_session,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListSessions", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sous)", sessions),
				method_list_sessions, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListRuns", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssstt)", runs),
				method_list_runs, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetRun", SD_BUS_ARGS("s", run_id), SD_BUS_RESULT("s", json),
				method_get_run, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SubmitRun", SD_BUS_ARGS("s", json), SD_BUS_RESULT("s", run_id),
				method_submit_run, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("DeleteRun", SD_BUS_ARGS("s", run_id), SD_BUS_NO_RESULT,
				method_delete_run, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_VTABLE_END
};

int manager_connect_bus(Manager *m, sd_bus *bus)
{
	int r;

	m->bus = sd_bus_ref(bus);
	r = sd_bus_add_object_vtable(bus, NULL, PROFD_MANAGER_PATH, PROFD_MANAGER_INTERFACE,
				     manager_vtable, m);
	if (r < 0)
		return r;
	r = sd_bus_add_fallback_vtable(bus, NULL, PROFD_SESSION_PREFIX, PROFD_SESSION_INTERFACE,
				       session_vtable, session_object_find, m);
	if (r < 0)
		return r;
	r = sd_bus_add_node_enumerator(bus, NULL, PROFD_SESSION_PREFIX, session_node_enumerator, m);
	if (r < 0)
		return r;
	r = sd_bus_attach_event(bus, m->event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0)
		return r;
	return sd_bus_request_name(bus, PROFD_BUS_NAME, 0);
}
