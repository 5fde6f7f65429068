/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unwinder-pool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "io-util.h"
#include "log.h"
#include "time-util.h"
#include "unwinder-spawn.h"
#include "unwinder/unwinder-protocol.h"

/* How often hangs and idle unwinders are looked for. */
#define WATCHDOG_USEC (500ULL * 1000ULL)
/* Messages of one unwinder handled per wakeup: the bus and other unwinders get turns between. */
#define MESSAGES_PER_WAKEUP 16
/*
 * An unwinder's messages (its requests walk the session's cgroup, read the
 * target's maps, copy symbol files) may take a quarter of the loop's time,
 * in bursts of up to 250 ms: a hostile one cannot starve the bus. Beyond
 * that its socket is not read until its budget is back above zero.
 */
#define LOOP_SHARE 4
#define LOOP_BURST_USEC (250LL * 1000LL)
/*
 * A session whose unwinder dies goes on with a new one this often; the next
 * death fails it (an input that kills every unwinder would otherwise restart
 * them without end).
 */
#define SESSION_RESTARTS_MAX 3U
/*
 * A killed unwinder not reaped this long after SIGKILL is stuck in the kernel
 * (a file system's request that never ends) or its exit is held (a tracer's
 * to take first): it is abandoned (helper_abandon()). An exit takes far less,
 * even of a large heap on a loaded machine.
 */
#define KILLED_EXIT_USEC (30ULL * 1000ULL * 1000ULL)
/* profd's end: the time its unwinders get to exit, all of them together. */
#define FREE_EXIT_USEC (5ULL * 1000ULL * 1000ULL)
/* Reaped unwinders whose pids are kept (unwinder_pool_reaped_pid()). */
#define REAPED_PIDS_MAX 256U

typedef struct Helper Helper;

typedef struct Attachment {
	struct Attachment *next;
	uint64_t id;
	Helper *helper;
	Collector *collector;
	UnwinderSessionInfo info;
	unsigned restarts; /* new unwinders it went on with after one died */
	UnwinderDoneFn done;
	void *userdata;
} Attachment;

struct Helper {
	struct Helper *next;
	UnwinderPool *pool;
	uid_t uid;
	pid_t pid;
	int pidfd, sock;
	sd_event_source *sock_source, *pid_source;
	sd_event_source *resume_source; /* its socket unread until then: over its budget */
	bool throttled;       /* until resume_source fires */
	int64_t budget_usec;  /* loop time its messages may still take (< 0: owed) */
	uint64_t budget_at;   /* CLOCK_MONOTONIC usec the budget was last topped up */
	uint64_t last_heard; /* CLOCK_MONOTONIC usec of its last message */
	uint64_t idle_since; /* CLOCK_MONOTONIC usec its last session ended; 0 while it has one */
	unsigned n_attached;
	uint64_t killed_at; /* CLOCK_MONOTONIC usec it was sent SIGKILL; 0: not sent */
	bool hung; /* killed for it: its sessions go on once it is reaped (helper_reap()) */
	bool exit_held; /* no exit watch (it exited, not reapable yet): the watchdog asks */
	bool pid_kept;  /* among the pool's reaped_pids */
	/* the backlog of its uid's last session, for the next (unwinder_pool_keep_backlog()) */
	Backlog *spare;
};

struct UnwinderPool {
	sd_event *event;
	UnwinderPoolOptions options;
	char *path;
	Helper *helpers;
	Attachment *attachments;
	uint64_t next_id;
	sd_event_source *watchdog;
	uint64_t deadline; /* CLOCK_MONOTONIC usec by which work must be done; 0: none */
	uint64_t hurry_usec; /* what unwinder_pool_hurry() gave */
	/* read by collectors' threads (unwinder_pool_reaped_pid()): atomic; 0 is no pid */
	_Atomic pid_t reaped_pids[REAPED_PIDS_MAX];
	unsigned reaped_next; /* the next to overwrite */
};

static uint64_t now_usec(void)
{
	return clock_nanos(CLOCK_MONOTONIC) / 1000;
}

static Attachment *find_attachment(UnwinderPool *p, uint64_t id, Attachment ***ret_link)
{
	for (Attachment **l = &p->attachments; *l; l = &(*l)->next)
		if ((*l)->id == id) {
			if (ret_link)
				*ret_link = l;
			return *l;
		}
	return NULL;
}

/* Unlink and free an attachment; its 'done' has run or will not. */
static void attachment_remove(UnwinderPool *p, Attachment *a)
{
	Attachment **link;

	if (find_attachment(p, a->id, &link))
		*link = a->next;
	if (--a->helper->n_attached == 0)
		a->helper->idle_since = now_usec();
	free(a);
}

/* End an attachment: the collector hears it, then whoever attached it. */
static void attachment_end(UnwinderPool *p, Attachment *a, const UnwinderStats *stats, int fd,
			   int error, const char *why)
{
	ProfileBuilderStats s = {};
	UnwinderDoneFn done = a->done;
	void *userdata = a->userdata;
	int r;

	if (stats)
		s = (ProfileBuilderStats){ .samples = stats->samples,
					   .unwind_failures = stats->unwind_failures,
					   .truncated_stacks = stats->truncated_stacks };
	r = collector_consumer_done(a->collector, stats ? &s : NULL, stats ? stats->cpu_nanos : 0,
				    stats && stats->warm, stats ? stats->stack_needed : 0, error);
	if (r == -EBADMSG && error == 0) { /* its counts refused (not an error it came with) */
		why = "the unwinder reported more samples than it was given";
		fd = safe_close(fd);
		error = r;
	}
	attachment_remove(p, a);
	done(userdata, fd, error, why);
}

/*
 * Its exit watch goes before its pidfd is closed: the number is free for the
 * next descriptor at once (a restart's new unwinder's socket or pidfd), whose
 * watch a later removal by number would take away, unheard for good.
 */
static void helper_forget_pid(Helper *h)
{
	h->pid_source = sd_event_source_disable_unref(h->pid_source);
	h->pidfd = safe_close(h->pidfd);
}

/*
 * Before it may be reaped: from then on /proc no longer says it was ours
 * (session_target_admit_system()), the pool does.
 */
static void helper_keep_pid(Helper *h)
{
	UnwinderPool *p = h->pool;

	if (h->pid_kept)
		return;
	atomic_store(&p->reaped_pids[p->reaped_next], h->pid);
	p->reaped_next = (p->reaped_next + 1) % REAPED_PIDS_MAX;
	h->pid_kept = true;
}

static void helper_unlink(Helper *h)
{
	for (Helper **l = &h->pool->helpers; *l; l = &(*l)->next)
		if (*l == h) {
			*l = h->next;
			return;
		}
}

/* Unlinked, and reaped or abandoned (or profd ends). */
static void helper_free(Helper *h)
{
	sd_event_source_disable_unref(h->sock_source);
	sd_event_source_disable_unref(h->resume_source);
	safe_close(h->sock);
	helper_forget_pid(h);
	backlog_free(h->spare);
	free(h);
}

/*
 * Our own child, same uid: no CAP_KILL needed. Nothing of it is heard from
 * now on and no session is given to it; its end is not waited for on the
 * loop (an exit may take long: its memory freed, a file system's request
 * given up): its exit watch reaps it (helper_reap()), else the watchdog gives
 * up on it (helper_abandon()). Meanwhile it stays among the pool's unwinders.
 */
static void helper_kill(Helper *h)
{
	h->sock_source = sd_event_source_disable_unref(h->sock_source);
	h->resume_source = sd_event_source_disable_unref(h->resume_source);
	h->sock = safe_close(h->sock);
	h->spare = backlog_free(h->spare);
	if (h->killed_at > 0)
		return;
	(void)syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
	h->killed_at = now_usec();
}

static int helper_get(UnwinderPool *p, uid_t uid, Helper **ret);
static int attachment_send(UnwinderPool *p, Attachment *a, int state_fd);

/* The session of 'a' goes on with a new unwinder from where the dead one left its backlog. */
static int attachment_resume(UnwinderPool *p, Attachment *a)
{
	_cleanup_close_ int state_fd = -1;
	Helper *h;
	int r;

	if (a->restarts >= SESSION_RESTARTS_MAX)
		return -ELOOP;
	r = state_fd = collector_consumer_restart(a->collector);
	if (r >= 0)
		r = helper_get(p, a->info.owner, &h);
	if (r < 0)
		return r;
	a->helper->n_attached--;
	a->helper = h;
	a->restarts++;
	if (h->n_attached == 0)
		h->last_heard = now_usec(); /* the clock starts with its first work */
	h->n_attached++;
	h->idle_since = 0;
	return attachment_send(p, a, state_fd);
}

/*
 * The sessions of an unwinder that is dead (resume: it crashed, or was killed
 * as hung, and is reaped) each go on with a new one, SESSION_RESTARTS_MAX
 * times at most; otherwise (it failed: killed, or abandoned), or past that,
 * each fails with 'why'. Returns how many go on.
 */
static unsigned helper_end_sessions(Helper *h, int error, const char *why, bool resume)
{
	UnwinderPool *p = h->pool;
	unsigned resumed = 0;
	char last[192];

	for (Attachment *a = p->attachments, *next; a; a = next) {
		next = a->next;
		if (a->helper != h)
			continue;
		if (resume && attachment_resume(p, a) >= 0) {
			resumed++;
			continue;
		}
		if (resume && a->restarts >= SESSION_RESTARTS_MAX)
			snprintf(last, sizeof(last), "%s; it died %u times in this session: not restarted again",
				 why, a->restarts + 1);
		attachment_end(p, a, NULL, -1, error,
			       resume && a->restarts >= SESSION_RESTARTS_MAX ? last : why);
	}
	return resumed;
}

static void helper_log_end(const Helper *h, const char *why, unsigned resumed)
{
	if (why && resumed > 0)
		log_warning("unwinder of uid %u (pid %d): %s; %u session(s) go on with a new one",
			    (unsigned)h->uid, (int)h->pid, why, resumed);
	else if (why)
		log_warning("unwinder of uid %u (pid %d): %s", (unsigned)h->uid, (int)h->pid, why);
}

/* The unwinder of a uid failed: it is killed, its sessions fail with 'why' (NULL: it had none). */
static void helper_fail(Helper *h, int error, const char *why)
{
	helper_kill(h);
	(void)helper_end_sessions(h, error, why, false);
	helper_log_end(h, why, 0);
}

static Attachment *find_helper_attachment(Helper *h, uint64_t id)
{
	Attachment *a = find_attachment(h->pool, id, NULL);

	return a && a->helper == h ? a : NULL;
}

static int serve_file_request(Helper *h, const UnwinderFileRequest *m)
{
	UnwinderFileReply reply = { .type = UNWINDER_FILE_REPLY, .cookie = m->cookie };
	Attachment *a = find_helper_attachment(h, m->session);
	int fd = a ? collector_open_target_file(a->collector, &m->request) : -ENOENT;
	int r;

	reply.error = fd < 0 ? fd : 0;
	r = unwinder_send(h->sock, &reply, sizeof(reply), &fd, fd >= 0);
	safe_close(fd);
	return r;
}

/* PROCESS_REQUEST: the namespace pid of a process of that session only. */
static int serve_process_request(Helper *h, const UnwinderProcessRequest *m)
{
	UnwinderProcessReply reply = { .type = UNWINDER_PROCESS_REPLY, .cookie = m->cookie };
	Attachment *a = find_helper_attachment(h, m->session);
	int r = a ? collector_namespace_pid(a->collector, m->pid, &reply.ns_pid) : -ENOENT;

	reply.error = r < 0 ? r : 0;
	return unwinder_send(h->sock, &reply, sizeof(reply), NULL, 0);
}

/*
 * A descriptor an unwinder hands over is read on the loop: only a memfd will
 * do (a file on a FUSE mount it was given could block the read forever).
 */
static bool is_memfd(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fcntl(fd, F_GET_SEALS) >= 0;
}

/* RESULT's second memfd: the stack-quality counts, read within their cap, then checked. */
static int take_quality(Collector *c, int fd)
{
	_cleanup_free_ char *data = NULL;
	size_t size;

	if (!is_memfd(fd) || lseek(fd, 0, SEEK_SET) < 0 ||
	    read_fd_full(fd, STACK_QUALITY_WIRE_MAX, &data, &size) < 0)
		return -EBADMSG;
	return collector_consumer_quality(c, data, size);
}

/* The name of a module file: lower-case hex, as the symbol cache makes it (never a path). */
static bool store_name_valid(const char *name)
{
	size_t n = strnlen(name, UNWINDER_STORE_NAME_MAX);

	if (n == 0 || n >= SYMBOL_FILE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return true;
}

/* The store keeps the module files of scope = the unwinder's uid (shared: only loaded, see
 * serve_store_load()); nothing else of the id is read. */
static ModuleIdentity store_scope(const Helper *h)
{
	return (ModuleIdentity){ .scope = (uint32_t)h->uid };
}

/* STORE_LOAD: a copy of the file in a memfd (the store's own descriptor never leaves profd). */
static int serve_store_load(Helper *h, const UnwinderStoreFile *m)
{
	const SymbolCacheStore *store = h->pool->options.store;
	UnwinderFileReply reply = { .type = UNWINDER_FILE_REPLY, .cookie = m->cookie };
	ModuleIdentity id = store_scope(h);
	_cleanup_free_ void *data = NULL;
	_cleanup_close_ int fd = -1;
	size_t size = 0;
	int r;

	r = store ? store->load(store->userdata, &id, m->name, &data, &size) : -ENOENT;
	if (r == -ENOENT && store) {
		/* made by profd alone, of root's files (system-prewarm.h); taken for the identity
		 * the unwinder read, only (symbol_module_deserialize()) */
		id.scope = SYMBOL_SCOPE_SHARED;
		r = store->load(store->userdata, &id, m->name, &data, &size);
		if (r >= 0)
			log_info("the unwinder of uid %u takes module file %s from symbols/shared",
				 (unsigned)h->uid, m->name);
	}
	if (r >= 0 && size > UNWINDER_STORE_FILE_MAX)
		r = -EFBIG;
	if (r >= 0)
		r = fd = memfd_new_from("profd-symbols", data, size,
					F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
	reply.error = r < 0 ? r : 0;
	return unwinder_send(h->sock, &reply, sizeof(reply), &fd, r >= 0);
}

/* STORE_SAVE: the unwinder's module file, into its own uid's directory (the store caps it). */
static int serve_store_save(Helper *h, const UnwinderStoreFile *m, int fd)
{
	const SymbolCacheStore *store = h->pool->options.store;
	ModuleIdentity id = store_scope(h);
	_cleanup_free_ char *data = NULL;
	size_t size;

	if (fd < 0 || !is_memfd(fd))
		return -EBADMSG;
	if (!store || lseek(fd, 0, SEEK_SET) < 0 ||
	    read_fd_full(fd, UNWINDER_STORE_FILE_MAX, &data, &size) < 0)
		return 0; /* not kept: the next session is cold, nothing else */
	(void)store->save(store->userdata, &id, m->name, data, size);
	return 0;
}

/* One message of an unwinder; < 0: it broke the protocol. */
static int helper_message(Helper *h, const void *buf, size_t size, int fds[UNWINDER_FDS_MAX])
{
	_cleanup_close_ int fd = fds[0], extra = fds[1];
	UnwinderFileRequest request;
	UnwinderProcessRequest process;
	UnwinderStoreFile store;
	UnwinderStats stats;
	Attachment *a;
	uint32_t type;
	char why[64];

	if (size < sizeof(type))
		return -EBADMSG;
	memcpy(&type, buf, sizeof(type));
	switch (type) {
	case UNWINDER_FILE_REQUEST:
		if (size != sizeof(request) || fd >= 0)
			return -EBADMSG;
		memcpy(&request, buf, sizeof(request));
		return serve_file_request(h, &request);
	case UNWINDER_PROCESS_REQUEST:
		if (size != sizeof(process) || fd >= 0)
			return -EBADMSG;
		memcpy(&process, buf, sizeof(process));
		return serve_process_request(h, &process);
	case UNWINDER_PROGRESS:
	case UNWINDER_RESULT:
		/* RESULT: the profile, and the stack-quality counts after it */
		if (size != sizeof(stats) || (extra >= 0 && fd < 0) ||
		    (type == UNWINDER_PROGRESS && fd >= 0))
			return -EBADMSG;
		memcpy(&stats, buf, sizeof(stats));
		a = find_helper_attachment(h, stats.session);
		if (!a)
			return 0; /* a session detached meanwhile */
		if (type == UNWINDER_PROGRESS) {
			collector_consumer_progress(a->collector,
						    &(ProfileBuilderStats){
							    .samples = stats.samples,
							    .unwind_failures = stats.unwind_failures,
							    .truncated_stacks = stats.truncated_stacks },
						    stats.cpu_nanos);
			return 0;
		}
		if (stats.error == 0 && (fd < 0 || !is_memfd(fd)))
			return -EBADMSG;
		if (stats.error > 0 || (extra >= 0 && stats.error < 0))
			return -EBADMSG;
		/* only this session pays for a report that cannot be true */
		if (extra >= 0 && take_quality(a->collector, extra) < 0) {
			attachment_end(h->pool, a, NULL, -1, -EBADMSG,
				       "sent a stack-quality report that cannot be true");
			return 0;
		}
		/* its errno, as it says: a clue, never trusted for more */
		snprintf(why, sizeof(why), "failed: %s",
			 stats.error > -4096 ? strerror(-stats.error) : "an impossible error");
		attachment_end(h->pool, a, &stats, stats.error < 0 ? -1 : TAKE_FD(fd),
			       stats.error < 0 ? stats.error : 0, stats.error < 0 ? why : NULL);
		return 0;
	case UNWINDER_STORE_LOAD:
	case UNWINDER_STORE_SAVE:
		if (size != sizeof(store) || extra >= 0 || (type == UNWINDER_STORE_LOAD && fd >= 0))
			return -EBADMSG;
		memcpy(&store, buf, sizeof(store));
		if (!store_name_valid(store.name))
			return -EBADMSG;
		if (type == UNWINDER_STORE_LOAD)
			return serve_store_load(h, &store);
		return serve_store_save(h, &store, fd);
	case UNWINDER_PROBE_REPLY:
		return 0; /* only tests probe */
	default:
		return -EBADMSG;
	}
}

/* The loop time it may still take, topped up for the time since the last look. */
static int64_t helper_budget(Helper *h, uint64_t now)
{
	h->budget_usec += (int64_t)((now - h->budget_at) / LOOP_SHARE);
	if (h->budget_usec > LOOP_BURST_USEC)
		h->budget_usec = LOOP_BURST_USEC;
	h->budget_at = now;
	return h->budget_usec;
}

static int on_helper_resume(sd_event_source *source, uint64_t usec, void *userdata)
{
	Helper *h = userdata;

	/* its silence meanwhile was ours */
	h->throttled = false;
	h->last_heard = now_usec();
	return sd_event_source_set_enabled(h->sock_source, SD_EVENT_ON);
}

/*
 * Over its budget: its socket is not read until the budget is back, and each
 * of its sessions counts the time (the unwinder waits for its answers meanwhile).
 */
static void helper_throttle(Helper *h, uint64_t now)
{
	uint64_t wait_usec = (uint64_t)-h->budget_usec * LOOP_SHARE + 1;
	int r;

	r = sd_event_source_set_enabled(h->sock_source, SD_EVENT_OFF);
	if (r >= 0 && h->resume_source)
		r = sd_event_source_set_time(h->resume_source, now + wait_usec);
	else if (r >= 0)
		r = sd_event_add_time(h->pool->event, &h->resume_source, CLOCK_MONOTONIC,
				      now + wait_usec, 0, on_helper_resume, h);
	if (r >= 0)
		r = sd_event_source_set_enabled(h->resume_source, SD_EVENT_ONESHOT);
	if (r < 0) {
		helper_fail(h, r, "cannot be held back; killed");
		return;
	}
	h->throttled = true;
	for (Attachment *a = h->pool->attachments; a; a = a->next)
		if (a->helper == h)
			collector_consumer_throttled(a->collector, wait_usec * 1000);
}

static int on_helper_message(sd_event_source *source, int sock, uint32_t revents, void *userdata)
{
	Helper *h = userdata;

	for (unsigned i = 0; i < MESSAGES_PER_WAKEUP; i++) {
		uint8_t buf[UNWINDER_MESSAGE_MAX];
		int fds[UNWINDER_FDS_MAX];
		uint64_t start = now_usec();
		ssize_t n;
		int r;

		if (helper_budget(h, start) <= 0) {
			helper_throttle(h, start);
			return 0;
		}
		n = unwinder_recv(sock, buf, MSG_DONTWAIT, fds);
		if (n == -EAGAIN)
			return 0;
		/* ECONNRESET: it died with messages of ours unread (a crash mid-session) */
		if (n == 0 || n == -ECONNRESET) {
			/* it is gone: its exit status comes on the pidfd; stop listening meanwhile */
			h->sock_source = sd_event_source_disable_unref(h->sock_source);
			return 0;
		}
		r = n < 0 ? (int)n : helper_message(h, buf, (size_t)n, fds);
		/* our answer found it gone (killed with requests still queued): as above */
		if (r == -EPIPE || r == -ECONNRESET) {
			h->sock_source = sd_event_source_disable_unref(h->sock_source);
			return 0;
		}
		if (r < 0) {
			helper_fail(h, -EPROTO, "said something impossible; killed");
			return 0;
		}
		h->last_heard = now_usec();
		h->budget_usec -= (int64_t)(h->last_heard - start);
	}
	return 0; /* more waits: the socket is still readable, other sources first */
}

/* It ended: reaped, its sessions go on with a new one; false: its exit is not ours yet. */
static bool helper_reap(Helper *h)
{
	siginfo_t info = {};
	const char *said;
	unsigned resumed;
	char why[96];

	helper_keep_pid(h);
	if (waitid(P_PIDFD, (id_t)h->pidfd, &info, WEXITED | WNOHANG) < 0 || info.si_pid == 0)
		return false;
	helper_forget_pid(h);
	helper_unlink(h);
	if (h->hung)
		snprintf(why, sizeof(why), "did not answer in time; killed");
	else if (info.si_code == CLD_EXITED)
		snprintf(why, sizeof(why), "exited with status %d", info.si_status);
	else
		snprintf(why, sizeof(why), "killed by signal %d (%s)", info.si_status,
			 strsignal(info.si_status));
	said = h->n_attached > 0 ? why : NULL;
	resumed = helper_end_sessions(h, h->hung ? -ETIMEDOUT : -ECONNRESET, said, true);
	helper_log_end(h, said, resumed);
	helper_free(h);
	return true;
}

static int on_helper_exit(sd_event_source *source, int pidfd, uint32_t revents, void *userdata)
{
	Helper *h = userdata;

	if (helper_reap(h))
		return 0;
	/* gone, but a tracer takes its exit first: its pidfd stays readable, so it is asked
	 * at each watchdog tick instead of at each turn of the loop */
	h->exit_held = true;
	return sd_event_source_set_enabled(source, SD_EVENT_OFF);
}

/*
 * Killed KILLED_EXIT_USEC ago and not reaped. It is safe to give up on it: a
 * process with SIGKILL pending never runs another instruction of its own, so
 * it cannot touch a session's backlog again, nor say anything (its socket is
 * closed); what the kernel does for it meanwhile ends in its exit. Its sessions
 * fail (their backlog stands where it left it, unknown to us: nothing to go
 * on from) and the uid's next session gets a new unwinder. Its exit, if it
 * ever comes, stays unreaped (its pidfd is gone): one zombie per stuck
 * unwinder until profd exits, where waiting on the loop could last forever.
 */
static void helper_abandon(Helper *h)
{
	char why[160];

	snprintf(why, sizeof(why),
		 "(pid %d) did not exit within %llu s of being killed; abandoned, its process "
		 "left to the kernel", (int)h->pid, KILLED_EXIT_USEC / 1000000ULL);
	helper_unlink(h);
	(void)helper_end_sessions(h, -ETIMEDOUT, why, false);
	log_warning("unwinder of uid %u %s", (unsigned)h->uid, why);
	helper_free(h);
}

/* Messages of the unwinder wait unread (the loop was busy elsewhere): it is not silent. */
static bool helper_has_unread(const Helper *h)
{
	struct pollfd p = { .fd = h->sock, .events = POLLIN };

	return h->sock_source && poll(&p, 1, 0) > 0;
}

/*
 * One that hangs may only be slow: it is killed, and its sessions go on with a
 * new one once it is reaped (on_helper_exit()), never two on one backlog. The
 * loop does not wait for its end meanwhile (a process's exit may take long:
 * its memory freed, a file system's request given up), nor hears it.
 */
static void helper_kill_hung(Helper *h)
{
	h->hung = true;
	helper_kill(h);
}

/*
 * An unwinder that has work and has said nothing for the timeout hangs: it
 * goes. One without work for the idle time goes too, with its caches: a user
 * who profiles nothing costs nothing.
 */
static int on_watchdog(sd_event_source *source, uint64_t usec, void *userdata)
{
	UnwinderPool *p = userdata;
	uint64_t now = now_usec();
	char why[96];

	for (Helper *h = p->helpers, *next; h; h = next) {
		next = h->next;
		if (h->exit_held && helper_reap(h))
			continue;
		if (h->killed_at > 0) {
			if (now - h->killed_at >= KILLED_EXIT_USEC)
				helper_abandon(h);
			continue; /* else its end comes */
		}
		if (h->n_attached > 0 && p->deadline > 0 && now >= p->deadline) {
			snprintf(why, sizeof(why),
				 "did not finish within %" PRIu64 " s once profd began to stop; killed",
				 p->hurry_usec / 1000000);
			helper_fail(h, -ETIMEDOUT, why);
		/* one held back is not heard meanwhile, by our choice */
		} else if (h->n_attached > 0 && !h->throttled &&
			   now - h->last_heard > p->options.timeout_usec && !helper_has_unread(h))
			helper_kill_hung(h);
		else if (h->n_attached == 0 && now - h->idle_since >= p->options.idle_usec)
			helper_kill(h);
	}
	/* no unwinder, nothing to watch: no wakeups while profd is idle */
	if (!p->helpers)
		return sd_event_source_set_enabled(source, SD_EVENT_OFF);
	return sd_event_source_set_time_relative(source, WATCHDOG_USEC);
}

static int helper_start(UnwinderPool *p, uid_t uid, Helper **ret)
{
	Helper *h = calloc(1, sizeof(*h));
	int r;

	if (!h)
		return -ENOMEM;
	h->pool = p;
	h->uid = uid;
	r = unwinder_spawn(p->path, p->options.memory_bytes, &h->pid, &h->pidfd, &h->sock);
	if (r < 0) {
		free(h);
		return r;
	}
	/* from here on the pool reaps it, or gives up on it */
	h->next = p->helpers;
	p->helpers = h;
	if (sd_event_source_set_time_relative(p->watchdog, WATCHDOG_USEC) >= 0)
		(void)sd_event_source_set_enabled(p->watchdog, SD_EVENT_ON);
	if (fcntl(h->sock, F_SETFL, O_NONBLOCK) < 0)
		r = negative_errno();
	if (r == 0)
		r = sd_event_add_io(p->event, &h->sock_source, h->sock, EPOLLIN, on_helper_message, h);
	if (r == 0)
		r = sd_event_add_io(p->event, &h->pid_source, h->pidfd, EPOLLIN, on_helper_exit, h);
	if (r < 0) {
		h->exit_held = !h->pid_source;
		helper_kill(h);
		return r;
	}
	h->last_heard = h->budget_at = now_usec();
	h->budget_usec = LOOP_BURST_USEC;
	log_info("started the unwinder of uid %u (pid %d)", (unsigned)uid, (int)h->pid);
	*ret = h;
	return 0;
}

/* The unwinder of 'uid' that takes sessions (not one killed), if any. */
static Helper *helper_find(UnwinderPool *p, uid_t uid)
{
	for (Helper *h = p->helpers; h; h = h->next)
		if (h->uid == uid && h->sock_source)
			return h;
	return NULL;
}

static int helper_get(UnwinderPool *p, uid_t uid, Helper **ret)
{
	Helper *h = helper_find(p, uid);

	if (!h)
		return helper_start(p, uid, ret);
	*ret = h;
	return 0;
}

/* SESSION_START of a's session to its unwinder, then its SESSION_STATE when it resumes. */
static int attachment_send(UnwinderPool *p, Attachment *a, int state_fd)
{
	const PerfRecordFormat *format = collector_get_format(a->collector);
	UnwinderSessionStart m = {
		.type = UNWINDER_SESSION_START,
		.flags = (a->info.dwarf ? UNWINDER_MODE_DWARF : 0) |
			 (a->info.kernel ? UNWINDER_KERNEL : 0) | (state_fd >= 0 ? UNWINDER_RESUMED : 0),
		.session = a->id,
		.pid = a->info.pid,
		.ns_pid = a->info.pid ? target_namespace_pid(a->info.pid) : 0,
		.owner = a->info.owner,
		.sample_id_all = format->sample_id_all,
		.sample_type = format->sample_type,
		.sample_regs_user = format->sample_regs_user,
		.cache_max_bytes = p->options.cache_max_bytes,
	};
	UnwinderSessionState state = { .type = UNWINDER_SESSION_STATE, .session = a->id };
	SamplingMetrics metrics;
	int fds[2], r;

	r = collector_get_backlog(a->collector, &fds[0], &fds[1]);
	if (r < 0)
		return r;
	collector_get_metrics(a->collector, &metrics);
	m.period_nanos = metrics.period_nanos;
	m.stack_bytes = metrics.stack_bytes;
	r = unwinder_send(a->helper->sock, &m, sizeof(m), fds, 2);
	if (r >= 0 && state_fd >= 0)
		r = unwinder_send(a->helper->sock, &state, sizeof(state), &state_fd, 1);
	return r;
}

int unwinder_pool_attach(UnwinderPool *p, const UnwinderSessionInfo *info, Collector *collector,
			 UnwinderDoneFn done, void *userdata, uint64_t *ret_id)
{
	Attachment *a;
	Helper *h;
	int r;

	r = helper_get(p, info->owner, &h);
	if (r < 0)
		return r;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*a = (Attachment){ .id = ++p->next_id, .helper = h, .collector = collector, .info = *info,
			   .done = done, .userdata = userdata };
	r = attachment_send(p, a, -1);
	if (r == -EINVAL) { /* not a collector consumed elsewhere */
		free(a);
		return r;
	}
	if (r < 0) {
		free(a);
		helper_fail(h, r, "cannot reach it; killed");
		return r;
	}
	if (h->n_attached == 0)
		h->last_heard = now_usec(); /* the clock starts with its first work */
	h->n_attached++;
	h->idle_since = 0;
	a->next = p->attachments;
	p->attachments = a;
	*ret_id = a->id;
	return 0;
}

void unwinder_pool_detach(UnwinderPool *p, uint64_t id)
{
	Attachment *a = find_attachment(p, id, NULL);
	UnwinderSessionCancel m = { .type = UNWINDER_SESSION_CANCEL, .session = id };

	if (!a)
		return;
	(void)unwinder_send(a->helper->sock, &m, sizeof(m), NULL, 0);
	attachment_remove(p, a);
}

void unwinder_pool_keep_backlog(UnwinderPool *p, uid_t uid, Backlog *b)
{
	Helper *h = b ? helper_find(p, uid) : NULL;

	if (!h) {
		backlog_free(b);
		return;
	}
	backlog_free(h->spare);
	h->spare = b;
}

Backlog *unwinder_pool_take_backlog(UnwinderPool *p, uid_t uid)
{
	Helper *h = helper_find(p, uid);

	return h ? TAKE_PTR(h->spare) : NULL;
}

void unwinder_pool_hurry(UnwinderPool *p, uint64_t timeout_usec)
{
	if (p->deadline > 0)
		return;
	p->hurry_usec = timeout_usec;
	p->deadline = now_usec() + timeout_usec;
}

bool unwinder_pool_reaped_pid(UnwinderPool *p, pid_t pid)
{
	for (unsigned i = 0; i < REAPED_PIDS_MAX; i++)
		if (pid > 0 && atomic_load(&p->reaped_pids[i]) == pid)
			return true;
	return false;
}

int unwinder_pool_new(sd_event *event, const UnwinderPoolOptions *options, UnwinderPool **ret)
{
	UnwinderPool *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->event = sd_event_ref(event);
	p->options = *options;
	p->path = strdup(options->path);
	if (!p->path) {
		unwinder_pool_free(p);
		return -ENOMEM;
	}
	r = sd_event_add_time_relative(event, &p->watchdog, CLOCK_MONOTONIC, WATCHDOG_USEC, 0,
				       on_watchdog, p);
	if (r >= 0)
		r = sd_event_source_set_enabled(p->watchdog, SD_EVENT_OFF);
	if (r < 0) {
		unwinder_pool_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/* profd ends: it may wait for a killed unwinder's exit, until 'end' (CLOCK_MONOTONIC usec). */
static void helper_reap_by(Helper *h, uint64_t end)
{
	struct pollfd pidfd = { .fd = h->pidfd, .events = POLLIN };
	uint64_t now = now_usec();
	siginfo_t info;

	if (h->pidfd >= 0 && poll(&pidfd, 1, now < end ? (int)((end - now) / 1000) : 0) > 0)
		(void)waitid(P_PIDFD, (id_t)h->pidfd, &info, WEXITED | WNOHANG);
}

UnwinderPool *unwinder_pool_free(UnwinderPool *p)
{
	uint64_t end = now_usec() + FREE_EXIT_USEC;

	if (!p)
		return NULL;
	for (Helper *h = p->helpers; h; h = h->next)
		helper_fail(h, -ECANCELED, NULL);
	while (p->helpers) {
		Helper *h = p->helpers;

		helper_reap_by(h, end);
		helper_unlink(h);
		helper_free(h);
	}
	sd_event_source_disable_unref(p->watchdog);
	sd_event_unref(p->event);
	free(p->path);
	free(p);
	return NULL;
}
