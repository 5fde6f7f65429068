/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "access.h"
#include "array.h"
#include "atomic-file.h"
#include "bus-errors.h"
#include "caller-text.h"
#include "cleanup.h"
#include "export-stream.h"
#include "log.h"
#include "manager.h"
#include "manager-live.h"
#include "manager-runs.h"
#include "perf-event.h"
#include "session-target.h"
#include "session.h"

/* Create the missing parents of 'path' (not 'path' itself), root-owned and 0755. */
static int mkdir_parents(const char *path)
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
	return 0;
}

/* Descriptors kept out of every budget: the bus, the loop, the state directory, files being written. */
#define FD_RESERVE 512
/* Descriptors a sampling session holds besides its perf events (epoll, timers, pidfds, helper). */
#define SESSION_FD_OVERHEAD 16

static void log_corrupt_run(const char *name, const char *reason, int set_aside_error,
			    void *userdata)
{
	const Manager *m = userdata;

	if (set_aside_error == 0)
		log_warning("set aside run record '%s/runs/%s' as %s.corrupt: %s", m->state_dir, name,
			    name, reason);
	else
		log_error("run record '%s/runs/%s' cannot be loaded (%s) nor set aside: %s",
			  m->state_dir, name, reason, strerror(-set_aside_error));
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

/* Why open_private_dir() refused a directory, for the operator. */
static const char *private_dir_problem(int r)
{
	switch (r) {
	case -EPERM:
		return "it is not owned by profd's user or is writable by group or others; "
		       "use a directory only profd's user can write (README: Security model)";
	case -ELOOP:
		return "it is a symbolic link";
	case -ENOTDIR:
		return "it is not a directory";
	default:
		return strerror(-r);
	}
}

/* The state directory and its runs/ and sessions/, each checked to be profd's alone. */
static int manager_open_state(Manager *m, int *ret_runs_fd)
{
	int r;

	r = manager_pick_state_dir(m);
	if (r < 0)
		return r;
	if (m->state_dir[0] != '/')
		return log_error_errno(-EINVAL, "the state directory '%s' is not an absolute path",
				       m->state_dir);
	r = mkdir_parents(m->state_dir);
	if (r >= 0)
		r = m->state_fd = open_private_dir(AT_FDCWD, m->state_dir, 0700);
	if (r < 0)
		return log_error_errno(r, "cannot use state directory '%s': %s", m->state_dir,
				       private_dir_problem(r));
	r = m->sessions_fd = open_private_dir(m->state_fd, "sessions", 0700);
	if (r < 0)
		return log_error_errno(r, "cannot use '%s': %s", m->sessions_dir, private_dir_problem(r));
	r = *ret_runs_fd = open_private_dir(m->state_fd, "runs", 0700);
	if (r < 0)
		return log_error_errno(r, "cannot use '%s/runs': %s", m->state_dir,
				       private_dir_problem(r));
	return 0;
}

/* Descriptors profd may hand out: its open file limit, less a reserve for itself. */
static uint64_t manager_fd_limit(void)
{
	struct rlimit rl;
	uint64_t limit = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		limit = rl.rlim_cur == RLIM_INFINITY ? 1U << 20 : rl.rlim_cur;
	return limit - (limit / 2 < FD_RESERVE ? limit / 2 : FD_RESERVE);
}

/* The sandboxed unwinders: profd-unwinder lives beside profd (the build tree and libexec alike). */
static int manager_new_unwinders(Manager *m)
{
	_cleanup_free_ char *self = NULL, *path = NULL;
	char *slash;
	int r;

	self = realpath("/proc/self/exe", NULL);
	if (!self)
		return log_error_errno(negative_errno(), "cannot find profd's own program: %m");
	slash = strrchr(self, '/');
	*slash = '\0';
	if (asprintf(&path, "%s/profd-unwinder", self) < 0)
		return -ENOMEM;
	if (access(path, X_OK) < 0)
		return log_error_errno(negative_errno(), "cannot run the unwinder '%s': %m", path);
	r = unwinder_pool_new(m->event,
			      &(UnwinderPoolOptions){ .path = path,
						      .timeout_usec = m->config.unwinder_timeout_usec,
						      .memory_bytes = m->config.unwinder_memory_bytes,
						      .idle_usec = m->config.unwinder_idle_usec,
						      .cache_max_bytes = m->config.symbol_cache_max_bytes,
						      .store = symbol_store_interface(m->symbol_store) },
			      &m->unwinders);
	if (r < 0)
		return log_error_errno(r, "cannot set up the unwinders: %s", strerror(-r));
	return 0;
}

/* Kernel tables of a few boots and module sets: old ones go by the store's LRU. */
#define KERNEL_SYMBOLS_DIR "kernel-symbols"
#define KERNEL_SYMBOLS_MAX_BYTES (64ULL << 20)

static int manager_new_kernel_store(Manager *m)
{
	_cleanup_close_ int fd = open_private_dir(m->state_fd, KERNEL_SYMBOLS_DIR, 0700);

	if (fd < 0)
		return fd;
	return symbol_store_new(fd, KERNEL_SYMBOLS_MAX_BYTES, &m->kernel_store);
}

/* WorkFn: read the kernel table now, so no session pays for /proc/kallsyms. */
static void prefetch_kernel_table(void *userdata)
{
	safe_close(kernel_table_open(userdata));
}

/*
 * Missing debug info from the debuginfod servers of DEBUGINFOD_URLS (the README's drop-in),
 * cached in DEBUGINFOD_CACHE_PATH or the state directory; without the variable, no network.
 * Before any thread starts: it sets DEBUGINFOD_CACHE_PATH for libdebuginfod.
 */
static void manager_new_debuginfod(Manager *m)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!urls || urls[strspn(urls, " \t")] == '\0')
		return;
#if HAVE_LIBDEBUGINFOD
	const char *cache = getenv("DEBUGINFOD_CACHE_PATH");
	_cleanup_free_ char *dir = NULL;
	int r;

	if (!cache || !*cache) {
		if (asprintf(&dir, "%s/debuginfod", m->state_dir) < 0)
			return (void)log_error("cannot fetch from debuginfod: %s", strerror(ENOMEM));
		cache = dir;
	}
	r = debuginfod_fetch_new(cache, &DEBUGINFOD_FETCH_DEFAULT_LIMITS, &m->debuginfod);
	if (r < 0)
		log_warning("cannot use debuginfod cache '%s', not fetching debug info: %s", cache,
			    private_dir_problem(r));
	else
		log_info("debug info missing here is fetched from '%s' into '%s'", urls, cache);
#else
	log_warning("DEBUGINFOD_URLS is set but profd was built without libdebuginfod: "
		    "not fetching debug info");
#endif
}

int manager_new(sd_event *event, Config *config, Manager **ret)
{
	_cleanup_(manager_freep) Manager *m = NULL;
	_cleanup_close_ int runs_fd = -1;
	RunStoreLimits limits;
	uint32_t kernel_max;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->state_fd = m->sessions_fd = -1;
	m->event = sd_event_ref(event);
	m->config = *config;
	*config = (Config){};

	r = budget_new(manager_fd_limit(), m->config.max_fds_per_user, &m->fds);
	if (r >= 0)
		r = budget_new(m->config.max_requests, m->config.max_requests_per_user, &m->requests);
	if (r < 0)
		return r;
	r = manager_open_state(m, &runs_fd);
	if (r < 0)
		return r;
	manager_new_debuginfod(m);

	m->max_hz = m->config.max_hz;
	if (sampling_max_hz(&kernel_max) == 0 && kernel_max < m->max_hz)
		m->max_hz = kernel_max;

	limits = (RunStoreLimits){
		.max_runs = m->config.max_runs,
		.max_runs_per_user = m->config.max_runs_per_user,
		.max_bytes = m->config.max_run_bytes,
		.max_bytes_per_user = m->config.max_run_bytes_per_user,
		.cache_bytes = m->config.run_cache_bytes,
	};
	r = run_store_new(runs_fd, &limits, event, &m->runs);
	if (r < 0)
		return log_error_errno(r, "cannot open run store '%s/runs': %s", m->state_dir,
				       strerror(-r));
	/* not MaxRecordBytes: lowering it must not turn stored runs into "corrupt" ones */
	r = run_store_load(m->runs, RUN_STORE_FILE_MAX, log_corrupt_run, m);
	if (r < 0)
		return log_error_errno(r, "cannot load run store '%s/runs': %s", m->state_dir,
				       strerror(-r));
	log_info("loaded %d run records from '%s/runs'", r, m->state_dir);
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
	r = export_server_new(event, m->export_workers, m->fds, m->requests, &m->exports);
	if (r < 0)
		return log_error_errno(r, "cannot set up exports: %s", strerror(-r));
	r = symbol_store_new(m->state_fd, m->config.symbol_cache_disk_max_bytes, &m->symbol_store);
	if (r < 0)
		return log_error_errno(r, "cannot use '%s/symbols': %s", m->state_dir,
				       private_dir_problem(r));
	/* a store of its own, never served to an unwinder (symbols/shared is: an unprivileged
	 * caller's unwinder must not get kernel addresses); a restart reads no /proc/kallsyms */
	r = manager_new_kernel_store(m);
	if (r < 0)
		log_warning("cannot use '%s/" KERNEL_SYMBOLS_DIR "', a restart reads /proc/kallsyms "
			    "again: %s", m->state_dir, private_dir_problem(r));
	r = kernel_table_new(m->kernel_store ? symbol_store_interface(m->kernel_store) : NULL,
			     &m->kernel_table);
	if (r < 0)
		return log_error_errno(r, "cannot set up the kernel's symbols: %s", strerror(-r));
	/* the kernel's symbols ready before the first session needs them, off its path */
	(void)worker_pool_submit(m->workers, prefetch_kernel_table, NULL, m->kernel_table);
	/* the system C library's debug files inflated once, niced, before a session needs them */
	r = inflated_debug_new(event, m->state_fd, m->config.symbol_cache_disk_max_bytes,
			       &m->inflated_debug);
	if (r < 0)
		log_warning("cannot use '%s/" INFLATED_DEBUG_DIR "', each unwinder inflates debug "
			    "files itself: %s", m->state_dir, private_dir_problem(r));
	/* and its unwind table compiled into symbols/shared/, before any caller's unwinder needs it */
	r = system_prewarm_start(event, symbol_store_interface(m->symbol_store), m->inflated_debug,
				 &m->system_prewarm);
	if (r < 0)
		log_warning("cannot prepare the system C library for the first sessions: %s",
			    strerror(-r));
	r = stack_sizes_new(m->state_fd, &m->stack_sizes);
	if (r < 0) {
		/* sessions copy the whole stack_bytes until they learn again: not worth failing for */
		log_warning("cannot use '%s/" STACK_SIZES_FILE "', learned stack sizes kept in memory: %s",
			    m->state_dir, strerror(-r));
		r = stack_sizes_new(-1, &m->stack_sizes);
		if (r < 0)
			return log_error_errno(r, "cannot keep stack sizes: %s", strerror(-r));
	}
	r = manager_new_unwinders(m);
	if (r < 0)
		return r;
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
	system_prewarm_free(m->system_prewarm); /* before the symbol store it fills */
	export_server_free(m->exports);
	manager_fail_unit_sessions(m);
	free(m->pending_starts);
	sd_bus_flush_close_unref(m->system_bus);
	for (size_t i = 0; i < m->n_sessions; i++)
		session_free(m->sessions[i]);
	free(m->sessions);
	unwinder_pool_free(m->unwinders); /* after the sessions: they detach from it */
	debuginfod_fetch_free(m->debuginfod); /* after the unwinders, whose requests it serves */
	inflated_debug_free(m->inflated_debug); /* the same */
	run_store_free(m->runs);
	kernel_table_free(m->kernel_table);
	symbol_store_free(m->kernel_store); /* after the table, which saves through it */
	stack_sizes_free(m->stack_sizes);
	symbol_store_free(m->symbol_store);
	budget_free(m->fds);
	budget_free(m->requests);
	safe_close(m->sessions_fd);
	safe_close(m->state_fd);
	sd_event_source_disable_unref(m->stop_check);
	sd_event_source_disable_unref(m->stop_timeout);
	sd_bus_slot_unref(m->releasing_name);
	sd_bus_flush_close_unref(m->bus); /* replies still queued go out */
	sd_event_unref(m->event);
	config_done(&m->config);
	free(m->state_dir);
	free(m->sessions_dir);
	free(m);
	return NULL;
}

int manager_add_session(Manager *m, Session *s)
{
	int r;

	r = ARRAY_RESERVE(m->sessions, m->n_allocated, m->n_sessions + 1, 16);
	if (r < 0)
		return r;
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

/* Finished sessions of 'uid', or of everyone for (uid_t)-1. */
static size_t count_finished(const Manager *m, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n_sessions; i++)
		n += !session_is_busy(m->sessions[i]) &&
		     (uid == (uid_t)-1 || m->sessions[i]->owner == uid);
	return n;
}

static void release_oldest_finished(Manager *m, uid_t uid, const char *why)
{
	for (size_t i = 0; i < m->n_sessions; i++) {
		Session *s = m->sessions[i];

		if (!session_is_busy(s) && s->owner == uid) {
			log_info("releasing session %s of uid %u: %s", s->id, (unsigned)uid, why);
			session_release(s);
			return;
		}
	}
}

/* The uid with the most finished sessions. */
static uid_t uid_with_most_finished(const Manager *m)
{
	uid_t best = 0;
	size_t best_n = 0;

	for (size_t i = 0; i < m->n_sessions; i++) {
		uid_t uid = m->sessions[i]->owner;
		size_t n = session_is_busy(m->sessions[i]) ? 0 : count_finished(m, uid);

		if (n > best_n) {
			best = uid;
			best_n = n;
		}
	}
	return best;
}

/* A uid other than root over its quota of finished sessions, or 0. */
static uid_t uid_over_finished_quota(const Manager *m)
{
	for (size_t i = 0; i < m->n_sessions; i++) {
		uid_t uid = m->sessions[i]->owner;

		if (uid != 0 && count_finished(m, uid) > m->config.max_finished_sessions_per_user)
			return uid;
	}
	return 0;
}

void manager_trim_finished_sessions(Manager *m)
{
	uid_t uid;

	/* a uid over its quota gives up its own oldest; root has no quota */
	while ((uid = uid_over_finished_quota(m)) != 0)
		release_oldest_finished(m, uid, "over MaxFinishedSessionsPerUser");
	/* everyone over the limit: the uid keeping the most gives up its oldest */
	while (count_finished(m, (uid_t)-1) > m->config.max_finished_sessions)
		release_oldest_finished(m, uid_with_most_finished(m), "over MaxFinishedSessions");
}

void manager_update_status(Manager *m)
{
	if (m->stopping) {
		sd_notifyf(false, "STATUS=stopping: saving %u sessions",
			   manager_count_busy_sessions(m, (uid_t)-1));
		return;
	}
	sd_notifyf(false, "STATUS=%u sessions sampling, %zu finished, %zu runs stored",
		   manager_count_busy_sessions(m, (uid_t)-1),
		   m->n_sessions - manager_count_busy_sessions(m, (uid_t)-1),
		   run_store_count_visible(m->runs, (uid_t)-1));
}

void manager_release_session_fds(Manager *m, Session *s)
{
	budget_release(m->fds, s->owner, s->fd_charge);
	s->fd_charge = 0;
}

int manager_request_begin(Manager *m, sd_bus_message *msg, uid_t *ret_uid, sd_bus_error *error)
{
	uid_t uid;
	int r;

	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	r = budget_charge(m->requests, uid, 1);
	if (r == -EDQUOT)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "uid %u has %" PRIu32 " requests in progress, the limit "
					 "(MaxRequestsPerUser); wait for their answers", (unsigned)uid,
					 m->config.max_requests_per_user);
	if (r < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "profd has too many requests in progress (MaxRequests); "
					 "try again shortly");
	*ret_uid = uid;
	return 0;
}

void manager_request_end(Manager *m, uid_t uid)
{
	budget_release(m->requests, uid, 1);
}

/* ---- org.profd.Profiler1.Manager ---- */

int manager_read_option(sd_bus_message *msg, const char *key, char type, void *ret,
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

int manager_read_session_option(sd_bus_message *msg, const char *key, SessionRequest *req,
				int *kernel, sd_bus_error *error)
{
	int b, r;

	if (strcmp(key, "backend") == 0)
		r = manager_read_option(msg, key, 's', &req->backend, error);
	else if (strcmp(key, "event") == 0)
		r = manager_read_option(msg, key, 's', &req->event, error);
	else if (strcmp(key, "workload_class") == 0)
		r = manager_read_option(msg, key, 's', &req->workload_class, error);
	else if (strcmp(key, "kernel") == 0) {
		r = manager_read_option(msg, key, 'b', &b, error);
		*kernel = b;
	} else if (strcmp(key, "stop_on_disconnect") == 0) {
		r = manager_read_option(msg, key, 'b', &b, error);
		req->stop_on_disconnect = b;
	} else if (strcmp(key, "stack_bytes") == 0)
		r = manager_read_option(msg, key, 'u', &req->stack_bytes, error);
	else if (strcmp(key, "ring_capacity") == 0)
		r = manager_read_option(msg, key, 't', &req->sample_budget, error);
	else
		return 0;
	return r < 0 ? r : 1;
}

int manager_parse_options(sd_bus_message *msg, ManagerOptionFn fn, void *userdata, const char *known,
			  sd_bus_error *error)
{
	int r;

	r = sd_bus_message_enter_container(msg, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
		char quoted[CALLER_TEXT_QUOTE_SIZE];
		const char *key;

		r = sd_bus_message_read(msg, "s", &key);
		if (r < 0)
			return r;
		r = fn(msg, key, userdata, error);
		if (r == 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "unknown option '%s' (known: %s)",
						 caller_text_quote(key, quoted), known);
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

typedef struct SessionOptions {
	SessionRequest *req;
	int *kernel;
} SessionOptions;

/* StartSession's own: the targets beyond one pid (BeginRun samples its caller) */
#define START_SESSION_TARGET_OPTIONS "cgroup, unit, system"

static int session_option(sd_bus_message *msg, const char *key, void *userdata, sd_bus_error *error)
{
	SessionOptions *o = userdata;
	int b, r;

	if (strcmp(key, "cgroup") == 0)
		r = manager_read_option(msg, key, 's', &o->req->cgroup, error);
	else if (strcmp(key, "unit") == 0)
		r = manager_read_option(msg, key, 's', &o->req->unit, error);
	else if (strcmp(key, "system") == 0) {
		r = manager_read_option(msg, key, 'b', &b, error);
		o->req->system = b;
	} else
		return manager_read_session_option(msg, key, o->req, o->kernel, error);
	return r < 0 ? r : 1;
}

int manager_validate_session_request(const SessionRequest *req, sd_bus_error *error)
{
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	int r;

	if (req->backend) {
		r = sampling_backend_check(req->backend);
		if (r == -EOPNOTSUPP)
			return sd_bus_error_setf(error, PROFD_ERROR_UNSUPPORTED,
						 "backend '%s' is not available on this machine (no "
						 "BPF: kernel BTF, CAP_BPF, a build with it); use "
						 "'perf-dwarf' or 'perf-fp'", req->backend);
		if (r < 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "unknown backend '%s' (known: auto, perf-dwarf, "
						 "perf-fp, bpf)", caller_text_quote(req->backend, quoted));
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
						 "cycles)", caller_text_quote(req->event, quoted));
	}
	if (req->workload_class) {
		r = caller_text_check(req->workload_class, CALLER_TEXT_MAX);
		if (r == -E2BIG)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "workload_class is %zu bytes, more than %d",
						 strlen(req->workload_class), CALLER_TEXT_MAX);
		if (r < 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "workload_class '%s' contains control characters",
						 caller_text_quote(req->workload_class, quoted));
	}
	if (req->stack_bytes > SAMPLING_MAX_STACK_BYTES)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "stack_bytes %" PRIu32 " is more than the kernel's %u",
					 req->stack_bytes, SAMPLING_MAX_STACK_BYTES);
	return 0;
}

/* StartSession's target: a pid, or (with pid 0) one other target. */
static int validate_target(const SessionRequest *req, sd_bus_error *error)
{
	if (!!req->cgroup + !!req->unit + req->system > 1)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "give one of the options cgroup, unit and system");
	if (req->pid == 0 && !req->cgroup && !req->unit && !req->system)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "pid 0 needs one of the options cgroup, unit or system");
	if (req->pid != 0 && (req->cgroup || req->unit || req->system))
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "the options cgroup, unit and system go with pid 0");
	return 0;
}

/* Room for one more sampling session of 'uid': globally, for users but root, for the uid. */
static int check_session_slots(Manager *m, uid_t uid, sd_bus_error *error)
{
	unsigned all = 0, users = 0, mine = 0;

	for (size_t i = 0; i < m->n_sessions; i++) {
		const Session *s = m->sessions[i];

		if (!session_is_busy(s))
			continue;
		all++;
		users += s->owner != 0;
		mine += s->owner == uid;
	}
	if (all >= m->config.max_sessions)
		return sd_bus_error_setf(error, PROFD_ERROR_TOO_MANY_SESSIONS,
					 "%u sessions are running, the limit (MaxSessions); "
					 "wait for one to finish", all);
	if (uid == 0)
		return 0;
	if (mine >= m->config.max_sessions_per_user)
		return sd_bus_error_setf(error, PROFD_ERROR_TOO_MANY_SESSIONS,
					 "uid %u has %u sessions running, the limit "
					 "(MaxSessionsPerUser); stop one first", (unsigned)uid, mine);
	if (users >= budget_users_limit(m->config.max_sessions, m->config.max_sessions_per_user))
		return sd_bus_error_setf(error, PROFD_ERROR_TOO_MANY_SESSIONS,
					 "users other than root run %u sessions, all they may "
					 "(MaxSessions less root's share); wait for one to finish",
					 users);
	return 0;
}

/* Kernel frames only for callers who could read them themselves (DESIGN.md §8). */
static bool kernel_frames_allowed(uid_t uid)
{
	_cleanup_fclose_ FILE *f = NULL;
	int paranoid;

	if (uid == 0)
		return true;
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	return f && fscanf(f, "%d", &paranoid) == 1 && paranoid <= 1;
}

/* Charge the target's perf events (threads x CPUs) to the caller's fd budget. */
static int charge_session_fds(Manager *m, uid_t uid, const TargetInfo *target, uint32_t min_threads,
			      uint64_t *ret, sd_bus_error *error)
{
	size_t n_cpus;
	uint64_t need;
	int r;

	r = perf_online_cpu_count(&n_cpus);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot read the online CPUs: %s",
					       strerror(-r));
	/* a live run's program may start its threads later: they are charged now */
	need = (uint64_t)(target->threads > min_threads ? target->threads : min_threads) * n_cpus +
	       SESSION_FD_OVERHEAD;
	if (need > m->config.max_fds_per_session)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "process %d has %u threads: sampling them on %zu CPUs takes "
					 "%" PRIu64 " file descriptors, more than MaxFdsPerSession (%" PRIu32 ")",
					 (int)target->pid, target->threads, n_cpus, need,
					 m->config.max_fds_per_session);
	r = budget_charge(m->fds, uid, need);
	if (r == -EDQUOT)
		return sd_bus_error_setf(error, PROFD_ERROR_TOO_MANY_SESSIONS,
					 "the sessions and exports of uid %u hold %" PRIu64 " file "
					 "descriptors; %" PRIu64 " more would pass MaxFdsPerUser (%" PRIu32 ")",
					 (unsigned)uid, budget_used(m->fds, uid), need,
					 m->config.max_fds_per_user);
	if (r < 0)
		return sd_bus_error_setf(error, PROFD_ERROR_TOO_MANY_SESSIONS,
					 "profd has no file descriptors to spare for %" PRIu64 " more "
					 "perf events; wait for a session to finish", need);
	*ret = need;
	return 0;
}

/* The target's process, checked against the ptrace rules for 'caller'; the pidfd in *ret_pidfd. */
static int open_target(const CallerCreds *caller, pid_t pid, TargetInfo *ret, int *ret_pidfd,
		       sd_bus_error *error)
{
	_cleanup_close_ int pidfd = -1;
	const char *why;
	int r;

	/* a thread id stands for its process */
	r = target_info_read(pid, ret);
	if (r == 0 && ret->pid != pid)
		r = target_info_read(ret->pid, ret);
	if (r == -ESRCH)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS, "no process with pid %d",
					 (int)pid);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot read process %d: %s", (int)pid,
					       strerror(-r));
	pidfd = pidfd_open_pid(ret->pid);
	if (pidfd >= 0)
		/* what we read must be about the pidfd's process: read again, then check it lives */
		r = target_info_read(ret->pid, ret);
	else
		r = pidfd;
	if (r == 0)
		r = pidfd_check_alive(pidfd);
	if (r == -ESRCH)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_PROCESS,
					 "process %d has exited", (int)ret->pid);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot open process %d: %s", (int)ret->pid,
					       strerror(-r));
	r = access_check_target(caller, ret, &why);
	if (r < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "uid %u may not profile process %d: %s",
					 (unsigned)caller->uid, (int)ret->pid, why);
	*ret_pidfd = TAKE_FD(pidfd);
	return 0;
}

int manager_start_caller(Manager *m, sd_bus_message *msg, CallerCreds *ret, sd_bus_error *error)
{
	if (m->stopping)
		return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY, "profd is shutting down");
	return access_sender_creds(msg, ret);
}

int manager_start_session(Manager *m, sd_bus_message *msg, SessionRequest *req, int kernel,
			  Session **ret, sd_bus_error *error)
{
	_cleanup_close_ int pidfd = -1;
	_cleanup_(sampling_target_freep) SamplingTarget *many = NULL;
	CallerCreds caller;
	TargetInfo target = { .threads = 1 };
	const char *comm;
	uint64_t fds = 0;
	Session *s;
	int r;

	r = manager_start_caller(m, msg, &caller, error);
	if (r < 0)
		return r;
	/* check access and limits */
	r = check_session_slots(m, caller.uid, error);
	if (r < 0)
		return r;
	req->kernel = kernel_frames_allowed(caller.uid);
	if (kernel == 1 && !req->kernel)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "kernel frames are only for root while "
					 "kernel.perf_event_paranoid is above 1; ask with kernel=false");
	if (kernel == 0)
		req->kernel = false;
	if (req->pid == 0)
		r = session_target_open(&caller, req, &many, error);
	else
		r = open_target(&caller, req->pid, &target, &pidfd, error);
	if (r < 0)
		return r;
	req->pid = target.pid;
	/* many processes take one event per CPU, whatever their threads (target.threads 1) */
	r = charge_session_fds(m, caller.uid, &target, req->min_threads, &fds, error);
	if (r < 0)
		return r;
	/* threads the target starts meanwhile must not take it past what was charged */
	req->max_events = (uint32_t)(fds - SESSION_FD_OVERHEAD);
	/* act */
	comm = many ? NULL : target.comm;
	r = session_start(m, &caller, req, comm, TAKE_FD(pidfd), TAKE_PTR(many), &s, error);
	if (r < 0) {
		budget_release(m->fds, caller.uid, fds);
		return r;
	}
	s->fd_charge = fds;
	if (sd_bus_message_get_sender(msg) &&
	    !(s->client_name = strdup(sd_bus_message_get_sender(msg)))) {
		session_release(s);
		return -ENOMEM;
	}
	if (req->stop_on_disconnect) {
		r = session_stop_on_disconnect(s, msg);
		if (r < 0) {
			/* cannot honour it: do not leave a session the client did not want running */
			session_release(s);
			return sd_bus_error_set_errnof(error, r, "cannot watch the client: %s",
						       strerror(-r));
		}
	}
	manager_update_status(m);
	*ret = s;
	return 0;
}

static int method_start_session(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	SessionRequest req = {};
	Session *s;
	uint32_t pid;
	int kernel = -1, r;

	/* parse */
	r = sd_bus_message_read(msg, "uut", &pid, &req.hz, &req.duration_usec);
	if (r < 0)
		return r;
	if (pid > INT32_MAX)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "pid %" PRIu32 " is not a process id; give the pid to profile, "
					 "or 0 with the option cgroup, unit or system", pid);
	req.pid = (pid_t)pid;
	r = manager_parse_options(msg, session_option, &(SessionOptions){ .req = &req, .kernel = &kernel },
				  MANAGER_SESSION_OPTIONS ", " START_SESSION_TARGET_OPTIONS, error);
	if (r < 0)
		return r;
	/* validate */
	r = manager_validate_session_request(&req, error);
	if (r >= 0)
		r = validate_target(&req, error);
	if (r < 0)
		return r;
	/* a unit's cgroup first: systemd answers when it does, the loop goes on meanwhile */
	if (req.unit)
		return manager_start_unit_session(m, msg, &req, kernel, error);
	/* check access and limits, act */
	r = manager_start_session(m, msg, &req, kernel, &s, error);
	if (r < 0)
		return r;
	/* reply */
	return sd_bus_reply_method_return(msg, "so", s->id, s->path);
}

static int method_list_sessions(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	Manager *m = userdata;
	uid_t uid;
	int r;

	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(sous)");
	for (size_t i = 0; r >= 0 && i < m->n_sessions; i++) {
		Session *s = m->sessions[i];

		if (access_check_owner(uid, s->owner) == 0)
			r = sd_bus_message_append(reply, "(sous)", s->id, s->path, (uint32_t)s->pid,
						  session_state_to_string(s->state));
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
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
				manager_method_list_runs, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListRunsRange", SD_BUS_ARGS("t", offset, "u", count),
				SD_BUS_RESULT("a(sssstt)", runs, "t", total), manager_method_list_runs_range,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetRun", SD_BUS_ARGS("s", run_id), SD_BUS_RESULT("s", json),
				manager_method_get_run, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SubmitRun", SD_BUS_ARGS("s", json), SD_BUS_RESULT("s", run_id),
				manager_method_submit_run, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("DeleteRun", SD_BUS_ARGS("s", run_id), SD_BUS_NO_RESULT,
				manager_method_delete_run, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("BeginRun", SD_BUS_ARGS("a{sv}", options),
				SD_BUS_RESULT("s", run_id, "o", session, "h", ring),
				manager_method_begin_run, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("FinishRun", SD_BUS_ARGS("s", run_id, "s", record_json),
				SD_BUS_NO_RESULT, manager_method_finish_run,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_VTABLE_END
};

/* Longest object path profd answers for: session paths are far shorter. */
#define OBJECT_PATH_MAX 256

/*
 * Before any handler: refuse calls to absurdly long object paths, since
 * sd-bus's own "Unknown object" error quotes the path, and a reply larger
 * than the bus's message limit would cost profd its connection.
 */
static int filter_long_paths(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	const char *path = sd_bus_message_get_path(msg);

	if (!sd_bus_message_is_method_call(msg, NULL, NULL) || !path ||
	    strlen(path) <= OBJECT_PATH_MAX)
		return 0;
	sd_bus_reply_method_errorf(msg, SD_BUS_ERROR_UNKNOWN_OBJECT,
				   "object path of %zu bytes: no such object", strlen(path));
	return 1;
}

int manager_connect_bus(Manager *m, sd_bus *bus)
{
	int r;

	m->bus = sd_bus_ref(bus);
	r = sd_bus_add_filter(bus, NULL, filter_long_paths, m);
	if (r >= 0)
		r = manager_add_stop_handlers(m);
	if (r < 0)
		return r;
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
