/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unwinder-serve.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "atomic-file.h"
#include "backlog-consumer.h"
#include "backlog.h"
#include "cleanup.h"
#include "io-util.h"
#include "process-resolvers.h"
#include "profile-builder.h"
#include "profile-file.h"
#include "sampling-session.h"
#include "stack-quality.h"
#include "stack-resolver.h"
#include "symbol-cache.h"
#include "time-util.h"
#include "unwinder-protocol.h"

/* Records of one session taken before the others get their turn. */
#define STEP_RECORDS 512
#define PROGRESS_NANOS (250ULL * 1000000ULL)
/* Sessions one unwinder serves at once (profd's limits keep a uid far below). */
#define SESSIONS_MAX 64
/*
 * Free descriptors the unwinder keeps before it asks for a file: the reply's,
 * and a session's start (two) that may come while it waits. A message whose
 * descriptors find no room arrives cut, and then all it could do is hang up.
 */
#define FD_ROOM 8

typedef struct Unwinder Unwinder;

typedef struct HelperSession {
	Unwinder *unwinder;
	uint64_t id;
	Backlog *backlog;
	ProfileBuilder *builder;
	StackResolver *resolver;      /* one process */
	ProcessResolvers *resolvers;  /* many (pid 0): one resolver each, modules shared */
	BacklogConsumer *consumer;
	TargetFileOpener opener; /* asks profd, on behalf of this session */
	uint32_t stack_bytes;    /* copied per sample */
	uint64_t cpu_nanos;      /* spent on it */
	uint64_t last_progress;
	PerfRecordFormat format;
	bool ready;              /* its backlog may hold something to take */
	bool awaiting_state;     /* resumed: not served until its SESSION_STATE came */
	int error;
} HelperSession;

/* A message that came while waiting for a file reply, kept for the main loop. */
typedef struct Stashed {
	struct Stashed *next;
	union {
		uint32_t type;
		uint8_t bytes[UNWINDER_MESSAGE_MAX];
	};
	size_t size;
	int fds[UNWINDER_FDS_MAX];
} Stashed;

struct Unwinder {
	int sock;
	SymbolCache *symbols; /* this uid's: shared by its sessions only */
	SymbolCacheStore store; /* on disk, through profd: this uid's directory only */
	uint64_t cache_max_bytes; /* the operator's cap, as the last SESSION_START said */
	HelperSession *sessions[SESSIONS_MAX];
	size_t n_sessions;
	Stashed *stash, **stash_tail;
	uint64_t next_cookie;
	bool hung_up;
};

static HelperSession *session_free(HelperSession *s)
{
	if (!s)
		return NULL;
	backlog_consumer_free(s->consumer);
	profile_builder_free(s->builder);
	process_resolvers_free(s->resolvers);
	stack_resolver_free(s->resolver);
	backlog_free(s->backlog);
	free(s);
	return NULL;
}

static void close_fds(int fds[UNWINDER_FDS_MAX])
{
	for (int i = 0; i < UNWINDER_FDS_MAX; i++)
		fds[i] = safe_close(fds[i]);
}

static int stash_push(Unwinder *u, const void *msg, size_t size, int fds[UNWINDER_FDS_MAX])
{
	Stashed *s = calloc(1, sizeof(*s));

	if (!s) {
		close_fds(fds);
		return -ENOMEM;
	}
	memcpy(s->bytes, msg, size);
	s->size = size;
	memcpy(s->fds, fds, sizeof(s->fds));
	*u->stash_tail = s;
	u->stash_tail = &s->next;
	return 0;
}

static Stashed *stash_pop(Unwinder *u)
{
	Stashed *s = u->stash;

	if (s) {
		u->stash = s->next;
		if (!u->stash)
			u->stash_tail = &u->stash;
	}
	return s;
}

/*
 * Send the request 'msg' (whose cookie is 'cookie') and wait for profd's reply
 * of 'reply_type' and 'reply_size' (into 'reply', its descriptors into 'fds'),
 * or why not. Other messages meanwhile are kept for the main loop.
 */
static int request_reply(Unwinder *u, const void *msg, size_t size, uint64_t cookie,
			 uint32_t reply_type, void *reply, size_t reply_size,
			 int fds[UNWINDER_FDS_MAX])
{
	int r;

	if (u->hung_up)
		return -EPIPE;
	r = unwinder_send(u->sock, msg, size, NULL, 0);
	if (r < 0)
		return r;
	for (;;) {
		union {
			uint32_t type;
			UnwinderFileReply head; /* every reply's */
			uint8_t bytes[UNWINDER_MESSAGE_MAX];
		} in;
		ssize_t n;

		n = unwinder_recv(u->sock, &in, 0, fds);
		if (n <= 0) {
			u->hung_up = true;
			return n < 0 ? (int)n : -EPIPE;
		}
		if (in.type == reply_type && (size_t)n == reply_size && in.head.cookie == cookie) {
			memcpy(reply, &in, reply_size);
			if (in.head.error < 0)
				close_fds(fds);
			return in.head.error < 0 ? in.head.error : 0;
		}
		r = stash_push(u, &in, (size_t)n, fds);
		if (r < 0)
			return r;
	}
}

/* -EMFILE unless FD_ROOM more descriptors could be open at once. */
static int check_fd_room(Unwinder *u)
{
	int fds[FD_ROOM], n, r = 0;

	for (n = 0; n < FD_ROOM; n++) {
		fds[n] = fcntl(u->sock, F_DUPFD_CLOEXEC, 0);
		if (fds[n] < 0) {
			r = negative_errno();
			break;
		}
	}
	while (n-- > 0)
		safe_close(fds[n]);
	return r;
}

/*
 * A request answered by a FILE_REPLY: the descriptor, or why not. Without room
 * for it (a session of many processes holds a descriptor per process and
 * module) the file is refused here: that module goes unnamed, the rest not.
 */
static int request_fd(Unwinder *u, const void *msg, size_t size, uint64_t cookie)
{
	UnwinderFileReply reply;
	int fds[UNWINDER_FDS_MAX], r;

	r = check_fd_room(u);
	if (r < 0)
		return r;
	r = request_reply(u, msg, size, cookie, UNWINDER_FILE_REPLY, &reply, sizeof(reply), fds);
	if (r < 0)
		return r;
	if (fds[0] < 0 || fds[1] >= 0) {
		close_fds(fds);
		return -EBADMSG;
	}
	return fds[0];
}

/* ProcessNamespacePidFn: profd says (the sandbox has no /proc); the pid itself when it will not. */
static uint32_t helper_namespace_pid(void *userdata, uint32_t pid)
{
	HelperSession *s = userdata;
	Unwinder *u = s->unwinder;
	UnwinderProcessRequest m = {
		.type = UNWINDER_PROCESS_REQUEST,
		.pid = pid,
		.session = s->id,
		.cookie = ++u->next_cookie,
	};
	UnwinderProcessReply reply;
	int fds[UNWINDER_FDS_MAX];

	if (request_reply(u, &m, sizeof(m), m.cookie, UNWINDER_PROCESS_REPLY, &reply,
			  sizeof(reply), fds) < 0)
		return pid;
	close_fds(fds); /* none comes along */
	return reply.ns_pid ?: pid;
}

/* TargetFileOpenFn: profd opens it (or refuses); the descriptor comes back on the socket. */
static int helper_open(const TargetFileRequest *request, void *userdata)
{
	HelperSession *s = userdata;
	Unwinder *u = s->unwinder;
	UnwinderFileRequest m = {
		.type = UNWINDER_FILE_REQUEST,
		.session = s->id,
		.cookie = ++u->next_cookie,
		.request = *request,
	};

	return request_fd(u, &m, sizeof(m), m.cookie);
}

static int store_message(Unwinder *u, uint32_t type, const char *name, UnwinderStoreFile *ret)
{
	*ret = (UnwinderStoreFile){ .type = type, .cookie = ++u->next_cookie };
	if (strlen(name) >= sizeof(ret->name))
		return -ENAMETOOLONG;
	strcpy(ret->name, name);
	return 0;
}

/* SymbolCacheStore.load: profd reads this uid's file of the module and hands a copy over. */
static int helper_store_load(void *userdata, const ModuleIdentity *id, const char *name,
			     void **ret_data, size_t *ret_size)
{
	Unwinder *u = userdata;
	_cleanup_close_ int fd = -1;
	UnwinderStoreFile m;
	char *data;
	int r;

	r = store_message(u, UNWINDER_STORE_LOAD, name, &m);
	if (r < 0)
		return r;
	r = fd = request_fd(u, &m, sizeof(m), m.cookie);
	if (r < 0)
		return r;
	r = read_fd_full(fd, UNWINDER_STORE_FILE_MAX, &data, ret_size);
	if (r < 0)
		return r;
	*ret_data = data;
	return 0;
}

/* SymbolCacheStore.save: the file goes to profd in a memfd; profd decides whether it is kept. */
static int helper_store_save(void *userdata, const ModuleIdentity *id, const char *name,
			     const void *data, size_t size)
{
	Unwinder *u = userdata;
	_cleanup_close_ int fd = -1;
	UnwinderStoreFile m;
	int r;

	if (u->hung_up)
		return -EPIPE;
	if (size > UNWINDER_STORE_FILE_MAX)
		return -EFBIG;
	r = store_message(u, UNWINDER_STORE_SAVE, name, &m);
	if (r < 0)
		return r;
	fd = memfd_new_from("profd-symbols", data, size, 0);
	if (fd < 0)
		return fd;
	return unwinder_send(u->sock, &m, sizeof(m), &fd, 1);
}

static HelperSession *find_session(Unwinder *u, uint64_t id, size_t *ret_index)
{
	for (size_t i = 0; i < u->n_sessions; i++)
		if (u->sessions[i]->id == id) {
			if (ret_index)
				*ret_index = i;
			return u->sessions[i];
		}
	return NULL;
}

static void remove_session(Unwinder *u, HelperSession *s)
{
	size_t i;

	if (find_session(u, s->id, &i)) {
		memmove(u->sessions + i, u->sessions + i + 1,
			(u->n_sessions - i - 1) * sizeof(*u->sessions));
		u->n_sessions--;
	}
	session_free(s);
}

/*
 * The resolver and the builder: of one process, or with pid 0 of the many a
 * cgroup holds, each process in its own address space as the records tell
 * (the files of each one profd opens only for a process of that session).
 */
static int session_new_resolver(HelperSession *s, const UnwinderSessionStart *m,
				StackResolverOptions *ro)
{
	int r;

	if (m->pid != 0) {
		r = stack_resolver_new(ro, &s->resolver);
		if (r < 0)
			return r;
		return profile_builder_new(m->pid, m->period_nanos, stack_resolver_resolve,
					   s->resolver, &s->builder);
	}
	ro->ns_pid = 0; /* each process has its own */
	r = process_resolvers_new(ro, &s->resolvers);
	if (r < 0)
		return r;
	process_resolvers_set_namespace_pid(s->resolvers, helper_namespace_pid, s);
	r = profile_builder_new(0, m->period_nanos, process_resolvers_resolve, s->resolvers,
				&s->builder);
	if (r >= 0) /* what a process that exited kept goes with it */
		profile_builder_set_exit_hook(s->builder, process_resolvers_exited, s->resolvers);
	return r;
}

static int start_session(Unwinder *u, const UnwinderSessionStart *m, int memfd, int eventfd)
{
	HelperSession *s;
	PerfRecordFormat format = {
		.sample_type = m->sample_type,
		.sample_regs_user = m->sample_regs_user,
		.sample_id_all = m->sample_id_all,
	};
	StackResolverOptions ro = {
		.mode = (m->flags & UNWINDER_MODE_DWARF) ? STACK_UNWIND_DWARF : STACK_UNWIND_FP,
		.kernel = m->flags & UNWINDER_KERNEL,
		.cache = u->symbols,
		.owner = m->owner,
		.ns_pid = m->ns_pid,
	};
	int r;

	if (u->n_sessions >= SESSIONS_MAX || find_session(u, m->session, NULL) || m->period_nanos == 0) {
		safe_close(memfd);
		safe_close(eventfd);
		return -EBADMSG;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		safe_close(memfd);
		safe_close(eventfd);
		return -ENOMEM;
	}
	/* the operator's cap, as profd has it now; evicts at once what is over it */
	if (m->cache_max_bytes > 0)
		u->cache_max_bytes = m->cache_max_bytes;
	symbol_cache_set_max_bytes(u->symbols, u->cache_max_bytes);
	s->unwinder = u;
	s->id = m->session;
	s->stack_bytes = m->stack_bytes;
	s->opener = (TargetFileOpener){ helper_open, s };
	s->format = format;
	s->awaiting_state = m->flags & UNWINDER_RESUMED;
	s->ready = !s->awaiting_state;
	ro.files = &s->opener;
	r = backlog_attach(memfd, eventfd, &s->backlog);
	if (r >= 0)
		r = session_new_resolver(s, m, &ro);
	if (r >= 0)
		r = backlog_consumer_new(s->backlog, &format, s->builder, &s->consumer);
	if (r < 0) {
		session_free(s);
		return r;
	}
	u->sessions[u->n_sessions++] = s;
	return 0;
}

/* SESSION_STATE: the records of the memfd go to the resumed session's builder first. */
static int take_state(Unwinder *u, const UnwinderSessionState *m, int fd)
{
	HelperSession *s = find_session(u, m->session, NULL);
	_cleanup_free_ char *data = NULL;
	size_t size;
	int r;

	if (!s || !s->awaiting_state || fd < 0)
		return -EBADMSG;
	r = read_fd_full(fd, UNWINDER_STATE_MAX, &data, &size);
	if (r < 0)
		return r;
	for (size_t at = 0; at < size;) {
		const struct perf_event_header *h = (const struct perf_event_header *)(data + at);
		PerfRecord rec;

		if (size - at < sizeof(*h) || h->size > size - at ||
		    perf_record_parse(&s->format, h, h->size, &rec) < 0)
			return -EBADMSG;
		r = profile_builder_add(s->builder, &rec);
		if (r == -ENOMEM)
			return r;
		at += h->size;
	}
	s->awaiting_state = false;
	s->ready = true;
	return 0;
}

static UnwinderStats session_stats(HelperSession *s, uint32_t type, int error)
{
	ProfileBuilderStats stats;

	profile_builder_get_stats(s->builder, &stats);
	return (UnwinderStats){ .type = type, .error = error, .session = s->id,
				.samples = stats.samples, .unwind_failures = stats.unwind_failures,
				.truncated_stacks = stats.truncated_stacks,
				.cpu_nanos = s->cpu_nanos };
}

static int send_stats(Unwinder *u, const UnwinderStats *m, int fd)
{
	return unwinder_send(u->sock, m, sizeof(*m), &fd, fd >= 0);
}

/* The session's stack-quality counts in a memfd, or < 0 (none: the result goes without);
 * profd words the report itself */
static int quality_memfd(HelperSession *s)
{
	const StackQuality *q = s->resolver ? stack_resolver_get_quality(s->resolver)
					    : process_resolvers_get_quality(s->resolvers);
	_cleanup_free_ char *wire = NULL;
	size_t size;

	if (!q || stack_quality_to_wire(q, &wire, &size) < 0)
		return -1;
	return memfd_new_from("profd-stack-quality", wire, size, 0);
}

/*
 * A module is charged its names, unwind table and debug sections, not what libdw
 * builds from them as it names (DIE trees, line tables: twice as much again for a
 * program of many functions). What the heap really holds keeps the cap: over it,
 * the cache's own cap is lowered in proportion, evicting the least recently used
 * modules, until the next session starts. This process is single-threaded: its
 * heap is the cache's and its sessions'.
 */
static void keep_heap_within_cap(Unwinder *u)
{
	struct mallinfo2 mi = mallinfo2();
	uint64_t heap = (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
	SymbolCacheStats stats;
	uint64_t lowered;

	symbol_cache_get_stats(u->symbols, &stats);
	if (heap <= u->cache_max_bytes || stats.bytes == 0)
		return;
	lowered = (uint64_t)((unsigned __int128)u->cache_max_bytes * stats.bytes / heap);
	/* the operator's cap is not what they think it is: worth their log (profd's stderr) */
	fprintf(stderr,
		"profd-unwinder: heap of %" PRIu64 " bytes over SymbolCacheMaxBytes=%" PRIu64
		": the symbol cache (%zu bytes) keeps at most %" PRIu64 " until the next session\n",
		heap, u->cache_max_bytes, stats.bytes, lowered);
	symbol_cache_set_max_bytes(u->symbols, lowered);
}

/* The session's backlog is closed and taken: its profile goes back to profd in a memfd. */
static int finish_session(Unwinder *u, HelperSession *s)
{
	_cleanup_close_ int fd = -1, quality = -1;
	UnwinderStats stats;
	int r = s->error;

	if (s->resolver)
		(void)stack_resolver_finish(s->resolver);
	else
		(void)process_resolvers_finish(s->resolvers);
	if (r == 0) {
		fd = memfd_create("profd-profile", MFD_CLOEXEC);
		r = fd < 0 ? negative_errno() : 0;
	}
	if (r == 0)
		r = profile_file_write_fd(profile_builder_get_profile(s->builder), fd);
	stats = session_stats(s, UNWINDER_RESULT, r);
	/* many processes: no one executable to be warm about, nor one stack to size */
	stats.warm = s->resolver && strcmp(stack_resolver_cache_state(s->resolver), "warm") == 0;
	if (s->resolver && s->stack_bytes > 0)
		stats.stack_needed = stack_resolver_stack_bytes_needed(s->resolver, s->stack_bytes,
								       SAMPLING_MAX_STACK_BYTES);
	if (r == 0)
		quality = quality_memfd(s);
	/* its modules are saved (STORE_SAVE) as they are unpinned: before the result, so a
	 * session that profd calls done has its names on disk */
	remove_session(u, s);
	keep_heap_within_cap(u);
	/* what the resolver and the evictions freed goes back to the system */
	malloc_trim(0);
	if (r < 0)
		return send_stats(u, &stats, -1);
	return unwinder_send(u->sock, &stats, sizeof(stats), (int[]){ fd, quality },
			     quality >= 0 ? 2 : 1);
}

/* One turn of a session: take what its backlog holds, up to STEP_RECORDS. */
static int serve_session(Unwinder *u, HelperSession *s)
{
	uint64_t cpu = clock_nanos(CLOCK_THREAD_CPUTIME_ID), now;
	UnwinderStats stats;
	int r;

	if (s->awaiting_state)
		return 0;
	r = backlog_consumer_step(s->consumer, STEP_RECORDS);
	s->cpu_nanos += clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu;
	s->ready = r == 1;
	if (r == 0)
		return finish_session(u, s);
	if (r == -EBADMSG) {
		s->error = r;
		return finish_session(u, s);
	}
	if (r < 0 && r != -EAGAIN && s->error == 0)
		s->error = r; /* later steps only discard; the result reports it */
	now = clock_nanos(CLOCK_MONOTONIC);
	if (now - s->last_progress >= PROGRESS_NANOS) {
		s->last_progress = now;
		stats = session_stats(s, UNWINDER_PROGRESS, s->error);
		return send_stats(u, &stats, -1);
	}
	return 0;
}

/* Only a test of the sandbox: try to open 'path', say what happened. */
static int probe_open(Unwinder *u, const UnwinderProbe *m)
{
	UnwinderProbeReply reply = { .type = UNWINDER_PROBE_REPLY };
	char path[UNWINDER_PROBE_PATH_MAX];
	int fd;

	memcpy(path, m->path, sizeof(path));
	path[sizeof(path) - 1] = '\0';
	fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	reply.error = fd < 0 ? -errno : 0;
	safe_close(fd);
	return unwinder_send(u->sock, &reply, sizeof(reply), NULL, 0);
}

static int handle_message(Unwinder *u, const void *buf, size_t size, int fds[UNWINDER_FDS_MAX])
{
	uint32_t type;
	HelperSession *s;
	int r = -EBADMSG;

	if (size >= sizeof(type))
		memcpy(&type, buf, sizeof(type));
	else
		type = 0;
	switch (type) {
	case UNWINDER_SESSION_START: {
		UnwinderSessionStart m;

		if (size != sizeof(m) || fds[0] < 0 || fds[1] < 0)
			break;
		memcpy(&m, buf, sizeof(m));
		r = start_session(u, &m, fds[0], fds[1]);
		fds[0] = fds[1] = -1; /* taken */
		break;
	}
	case UNWINDER_SESSION_STATE: {
		UnwinderSessionState m;

		if (size != sizeof(m) || fds[1] >= 0)
			break;
		memcpy(&m, buf, sizeof(m));
		r = take_state(u, &m, fds[0]);
		break;
	}
	case UNWINDER_SESSION_CANCEL: {
		UnwinderSessionCancel m;

		if (size != sizeof(m))
			break;
		memcpy(&m, buf, sizeof(m));
		s = find_session(u, m.session, NULL);
		if (s)
			remove_session(u, s);
		r = 0;
		break;
	}
	case UNWINDER_PROBE_OPEN: {
		UnwinderProbe m;

		if (size != sizeof(m))
			break;
		memcpy(&m, buf, sizeof(m));
		r = probe_open(u, &m);
		break;
	}
	case UNWINDER_FILE_REPLY:
	case UNWINDER_PROCESS_REPLY:
		r = 0; /* for a request given up on: its descriptor is closed */
		break;
	}
	close_fds(fds);
	return r;
}

/* Messages stashed while a file was awaited, then whatever waits on the socket. */
static int handle_messages(Unwinder *u, bool socket_ready)
{
	Stashed *st;
	int r;

	while ((st = stash_pop(u))) {
		r = handle_message(u, st->bytes, st->size, st->fds);
		free(st);
		if (r < 0)
			return r;
	}
	while (socket_ready && !u->hung_up) {
		uint8_t buf[UNWINDER_MESSAGE_MAX];
		int fds[UNWINDER_FDS_MAX];
		ssize_t n;

		n = unwinder_recv(u->sock, buf, MSG_DONTWAIT, fds);
		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			u->hung_up = true;
			return n < 0 ? (int)n : 0;
		}
		r = handle_message(u, buf, (size_t)n, fds);
		if (r < 0)
			return r;
	}
	return 0;
}

static int serve_loop(Unwinder *u)
{
	for (;;) {
		struct pollfd p[1 + SESSIONS_MAX];
		size_t polled = u->n_sessions;
		bool busy = false;
		int r, n;

		p[0] = (struct pollfd){ .fd = u->sock, .events = POLLIN };
		for (size_t i = 0; i < u->n_sessions; i++) {
			p[1 + i] = (struct pollfd){ .fd = backlog_get_eventfd(u->sessions[i]->backlog),
						    .events = POLLIN };
			busy = busy || (u->sessions[i]->ready && !u->sessions[i]->awaiting_state);
		}
		n = poll(p, 1 + polled, busy || u->stash ? 0 : (int)(PROGRESS_NANOS / 1000000));
		if (n < 0 && errno != EINTR)
			return negative_errno();
		r = handle_messages(u, n > 0 && p[0].revents);
		if (r < 0)
			return r;
		if (u->hung_up)
			return 0;
		/* the poll set is of the sessions before the messages: match them by eventfd */
		for (size_t i = u->n_sessions; i-- > 0;) {
			HelperSession *s = u->sessions[i];

			if (n > 0 && i < polled && p[1 + i].fd == backlog_get_eventfd(s->backlog) &&
			    p[1 + i].revents) {
				(void)backlog_wait(s->backlog, 0);
				s->ready = true;
			}
			/* without a wakeup it is looked at every progress period all the same */
			r = serve_session(u, s);
			if (r < 0)
				return r;
		}
	}
}

int unwinder_serve(int sock)
{
	Unwinder u = { .sock = sock, .cache_max_bytes = SYMBOL_CACHE_DEFAULT_MAX_BYTES };
	Stashed *st;
	int r;

	u.stash_tail = &u.stash;
	u.store = (SymbolCacheStore){ helper_store_load, helper_store_save, &u };
	r = symbol_cache_new(&u.symbols);
	if (r < 0)
		return r;
	symbol_cache_set_store(u.symbols, &u.store);
	r = serve_loop(&u);
	while (u.n_sessions > 0)
		remove_session(&u, u.sessions[u.n_sessions - 1]);
	while ((st = stash_pop(&u))) {
		close_fds(st->fds);
		free(st);
	}
	symbol_cache_free(u.symbols);
	return r;
}
