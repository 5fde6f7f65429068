/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access.h"
#include "atomic-file.h"
#include "cleanup.h"
#include "export-stream.h"
#include "log.h"

/* Pages written per wake-up at most, so one fast reader cannot hog the loop. */
#define EXPORT_STREAM_SLICE 16
/* Descriptors an ExportToFd holds: the file, the client's fd and sd-bus's copy of it, an eventfd. */
#define EXPORT_TO_FD_FDS 4
/* How often a copy thread that was told to stop is signalled again until it does. */
#define EXPORT_THREAD_NUDGE_USEC (50ULL * 1000ULL)
/* How long profd waits at exit for copy threads to notice they must stop. */
#define EXPORT_THREAD_EXIT_WAIT_MSEC 2000

typedef enum ExportKind {
	EXPORT_READ,   /* Export: the file read into the reply, on a worker */
	EXPORT_PACED,  /* ExportToFd into a pipe or socket, from the loop */
	EXPORT_THREAD, /* ExportToFd into anything else, on a thread of its own */
} ExportKind;

typedef struct Export {
	ExportServer *server;
	struct Export *next, *prev;
	ExportKind kind;
	sd_bus_message *message;
	uid_t uid;
	uint64_t fds; /* charged to the uid */
	int in, out;
	int error;
	sd_event_source *io, *timer;

	/* EXPORT_READ */
	uint64_t max;
	char *data;
	size_t size;

	/* EXPORT_PACED */
	bool socket;
	char buf[PIPE_BUF];
	size_t len, off;

	/* EXPORT_THREAD */
	pthread_t thread;
	bool thread_running;  /* started and not joined */
	int done_fd;          /* written by the thread when it returns */
	atomic_bool stop;     /* the loop wants the copy to end */
	int stop_reason;      /* -ETIMEDOUT or -ECANCELED, for the reply */
	atomic_uint_fast64_t written;
	uint64_t written_seen; /* at the last stall check */
} Export;

struct ExportServer {
	sd_event *event;
	WorkerPool *readers;
	Budget *fds, *requests;
	Export *exports; /* in progress, so that stopping can answer and free them */
};

/* ---- bookkeeping ---- */

static void export_free(Export *e)
{
	ExportServer *x = e->server;

	if (e->prev)
		e->prev->next = e->next;
	else if (x->exports == e)
		x->exports = e->next;
	if (e->next)
		e->next->prev = e->prev;
	sd_event_source_disable_unref(e->io);
	sd_event_source_disable_unref(e->timer);
	sd_bus_message_unref(e->message);
	budget_release(x->fds, e->uid, e->fds);
	budget_release(x->requests, e->uid, 1);
	safe_close(e->in);
	safe_close(e->out);
	safe_close(e->done_fd);
	free(e->data);
	free(e);
}

/* Answer the client and forget the export. */
static void export_end(Export *e, int error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	/*
	 * Close our end first so a reader sees EOF no later than the reply;
	 * but leave epoll before: a closed fd cannot be removed from it, and
	 * the pipe (alive through other copies) would go on waking a freed source.
	 */
	e->io = sd_event_source_disable_unref(e->io);
	e->out = safe_close(e->out);
	if (error == -ETIMEDOUT)
		sd_bus_reply_method_errnof(e->message, error,
					   "the reader of the export took nothing for %llu s; gave up",
					   EXPORT_STREAM_STALL_USEC / 1000000ULL);
	else if (error == -EFBIG)
		sd_bus_reply_method_errorf(e->message, SD_BUS_ERROR_LIMITS_EXCEEDED,
					   "the export is larger than %llu bytes; use ExportToFd",
					   (unsigned long long)e->max);
	else if (error < 0)
		sd_bus_reply_method_errnof(e->message, error, "cannot export: %s", strerror(-error));
	else {
		r = sd_bus_message_new_method_return(e->message, &reply);
		if (r >= 0 && e->kind == EXPORT_READ)
			r = sd_bus_message_append_array(reply, 'y', e->data, e->size);
		if (r >= 0)
			r = sd_bus_send(NULL, reply, NULL);
		if (r < 0)
			log_warning("cannot send an export reply: %s", strerror(-r));
	}
	export_free(e);
}

static int now_plus(sd_event *event, uint64_t usec, uint64_t *ret)
{
	uint64_t now;
	int r = sd_event_now(event, CLOCK_MONOTONIC, &now);

	if (r < 0)
		return r;
	*ret = now + usec;
	return 0;
}

/* ---- Export: a bounded read on a worker ---- */

static void read_work(void *userdata)
{
	Export *e = userdata;

	e->error = read_fd_full(e->in, e->max, &e->data, &e->size);
}

static void read_done(void *userdata)
{
	Export *e = userdata;

	export_end(e, e->error);
}

/* ---- ExportToFd into a pipe or socket: paced by the reader, on the loop ---- */

static int writable_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLOUT);
}

/*
 * Never blocks, whatever the client's flags (which are its own: we must not
 * change them): a socket is written with MSG_DONTWAIT, a pipe takes up to
 * PIPE_BUF bytes whole once it polls writable.
 */
static ssize_t write_some(Export *e)
{
	if (e->socket)
		return send(e->out, e->buf + e->off, e->len - e->off, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (!writable_now(e->out)) {
		errno = EAGAIN;
		return -1;
	}
	return write(e->out, e->buf + e->off, e->len - e->off);
}

static int on_writable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Export *e = userdata;
	uint64_t deadline;

	if (revents & (EPOLLERR | EPOLLHUP)) {
		export_end(e, -EPIPE);
		return 0;
	}
	for (int i = 0; i < EXPORT_STREAM_SLICE; i++) {
		ssize_t n;

		if (e->off == e->len) {
			n = read(e->in, e->buf, sizeof(e->buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				export_end(e, n < 0 ? negative_errno() : 0);
				return 0;
			}
			e->len = (size_t)n;
			e->off = 0;
		}
		n = write_some(e);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			export_end(e, negative_errno());
			return 0;
		}
		e->off += (size_t)n;
	}
	/* progress: the stall clock starts again */
	if (now_plus(e->server->event, EXPORT_STREAM_STALL_USEC, &deadline) >= 0)
		sd_event_source_set_time(e->timer, deadline);
	return 0;
}

static int on_paced_stalled(sd_event_source *s, uint64_t usec, void *userdata)
{
	export_end(userdata, -ETIMEDOUT);
	return 0;
}

/* ---- ExportToFd into anything else: a thread of its own ---- */

static void on_nudge(int sig)
{
	/* nothing: the signal only interrupts a blocking write (no SA_RESTART) */
}

static void *copy_thread(void *arg)
{
	Export *e = arg;
	char buf[64 * 1024];
	sigset_t nudge;
	uint64_t one = 1;
	int r = 0;

	sigemptyset(&nudge);
	sigaddset(&nudge, SIGRTMIN);
	pthread_sigmask(SIG_UNBLOCK, &nudge, NULL);
	while (r == 0 && !atomic_load(&e->stop)) {
		ssize_t n = read(e->in, buf, sizeof(buf));
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? negative_errno() : 0;
			break;
		}
		while (off < (size_t)n && !atomic_load(&e->stop)) {
			ssize_t w = write(e->out, buf + off, (size_t)n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				r = negative_errno();
				break;
			}
			off += (size_t)w;
			atomic_fetch_add(&e->written, (uint64_t)w);
		}
	}
	e->error = atomic_load(&e->stop) ? e->stop_reason : r;
	if (write(e->done_fd, &one, sizeof(one)) < 0) {
		/* an eventfd counter cannot overflow with one write */
	}
	return NULL;
}

static void thread_join(Export *e)
{
	if (e->thread_running) {
		pthread_join(e->thread, NULL);
		e->thread_running = false;
	}
}

static int on_thread_done(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Export *e = userdata;

	thread_join(e);
	export_end(e, e->error);
	return 0;
}

/* Tell the copy thread to stop and interrupt its write; again until it has returned. */
static void thread_stop(Export *e, int reason)
{
	if (!atomic_load(&e->stop))
		e->stop_reason = reason;
	atomic_store(&e->stop, true);
	if (e->thread_running)
		pthread_kill(e->thread, SIGRTMIN);
}

static int on_thread_check(sd_event_source *s, uint64_t usec, void *userdata)
{
	Export *e = userdata;
	uint64_t written = atomic_load(&e->written), next;

	if (atomic_load(&e->stop) || written == e->written_seen) {
		/* stalled (or told to stop): interrupt, and look again shortly */
		thread_stop(e, -ETIMEDOUT);
		if (now_plus(e->server->event, EXPORT_THREAD_NUDGE_USEC, &next) >= 0)
			sd_event_source_set_time(s, next);
	} else if (now_plus(e->server->event, EXPORT_STREAM_STALL_USEC, &next) >= 0) {
		e->written_seen = written;
		sd_event_source_set_time(s, next);
	}
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

static int thread_start(Export *e)
{
	int r;

	e->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->done_fd < 0)
		return negative_errno();
	r = sd_event_add_io(e->server->event, &e->io, e->done_fd, EPOLLIN, on_thread_done, e);
	if (r < 0)
		return r;
	r = -pthread_create(&e->thread, NULL, copy_thread, e);
	if (r < 0)
		return r;
	e->thread_running = true;
	(void)pthread_setname_np(e->thread, EXPORT_THREAD_NAME);
	return 0;
}

/* ---- the server ---- */

int export_server_new(sd_event *event, WorkerPool *readers, Budget *fds, Budget *requests,
		      ExportServer **ret)
{
	struct sigaction sa = { .sa_handler = on_nudge };
	ExportServer *x;

	/* no SA_RESTART: the signal must make a blocked write() return */
	if (sigaction(SIGRTMIN, &sa, NULL) < 0)
		return negative_errno();
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	*x = (ExportServer){ .event = event, .readers = readers, .fds = fds, .requests = requests };
	*ret = x;
	return 0;
}

void export_server_cancel_all(ExportServer *x)
{
	for (Export *e = x->exports, *next; e; e = next) {
		next = e->next;
		if (e->kind == EXPORT_PACED)
			export_end(e, -ECANCELED);
		else if (e->kind == EXPORT_THREAD)
			thread_stop(e, -ECANCELED); /* on_thread_done() answers */
	}
}

/* At exit: wait a little for each copy thread, then answer; a thread stuck in the kernel is left. */
static void thread_finish_now(Export *e, int *budget_msec)
{
	while (e->thread_running && *budget_msec > 0) {
		struct pollfd p = { .fd = e->done_fd, .events = POLLIN };

		thread_stop(e, -ECANCELED);
		if (poll(&p, 1, 10) > 0) {
			thread_join(e);
			break;
		}
		*budget_msec -= 10;
	}
	if (e->thread_running) {
		log_warning("an export's copy thread did not stop; leaving it");
		pthread_detach(e->thread);
		/* it still uses 'e': keep it, and the descriptors, to the end */
		return;
	}
	export_end(e, e->error);
}

ExportServer *export_server_free(ExportServer *x)
{
	int budget_msec = EXPORT_THREAD_EXIT_WAIT_MSEC;

	if (!x)
		return NULL;
	export_server_cancel_all(x);
	while (x->exports) {
		Export *e = x->exports;

		if (e->kind == EXPORT_THREAD && e->thread_running) {
			x->exports = e->next; /* out of the list either way */
			if (x->exports)
				x->exports->prev = NULL;
			e->next = e->prev = NULL;
			thread_finish_now(e, &budget_msec);
			continue;
		}
		export_end(e, -ECANCELED); /* reads were finished by their pool already */
	}
	free(x);
	return NULL;
}

static int export_new(ExportServer *x, sd_bus_message *m, uid_t uid, uint64_t fds, int in,
		      int out, Export **ret)
{
	Export *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->server = x;
	e->message = sd_bus_message_ref(m);
	e->uid = uid;
	e->fds = fds;
	e->in = in;
	e->out = out;
	e->done_fd = -1;
	e->next = x->exports;
	if (x->exports)
		x->exports->prev = e;
	x->exports = e;
	*ret = e;
	return 0;
}

/* Charge the caller for one export holding 'fds' descriptors. */
static int charge(ExportServer *x, uid_t uid, uint64_t fds, sd_bus_error *error)
{
	int r = budget_charge(x->requests, uid, 1);

	if (r == -EDQUOT)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "uid %u has too many requests in progress "
					 "(MaxRequestsPerUser); wait for their answers", (unsigned)uid);
	if (r < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "profd has too many requests in progress (MaxRequests); "
					 "try again shortly");
	r = budget_charge(x->fds, uid, fds);
	if (r < 0) {
		budget_release(x->requests, uid, 1);
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "no file descriptors to spare for another export of uid %u "
					 "(MaxFdsPerUser); wait for one to finish", (unsigned)uid);
	}
	return 0;
}

int export_server_reply(ExportServer *x, sd_bus_message *m, int in_fd, int out_fd, uint64_t max,
			sd_bus_error *error)
{
	_cleanup_close_ int in = in_fd, out = out_fd;
	uint64_t fds = out < 0 ? 1 : EXPORT_TO_FD_FDS, deadline;
	struct stat st;
	Export *e;
	uid_t uid;
	int r;

	r = access_sender_uid(m, &uid);
	if (r < 0)
		return r;
	r = charge(x, uid, fds, error);
	if (r < 0)
		return r;
	r = export_new(x, m, uid, fds, TAKE_FD(in), TAKE_FD(out), &e);
	if (r < 0) {
		budget_release(x->fds, uid, fds);
		budget_release(x->requests, uid, 1);
		return r;
	}
	e->max = max;
	if (e->out < 0) {
		e->kind = EXPORT_READ;
		r = worker_pool_submit(x->readers, read_work, read_done, e);
	} else if (fstat(e->out, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		/* a reader on the other end sets the pace: copy from the loop as it reads */
		e->kind = EXPORT_PACED;
		e->socket = S_ISSOCK(st.st_mode);
		r = now_plus(x->event, EXPORT_STREAM_STALL_USEC, &deadline);
		if (r >= 0)
			r = sd_event_add_io(x->event, &e->io, e->out, EPOLLOUT, on_writable, e);
		if (r >= 0)
			r = sd_event_add_time(x->event, &e->timer, CLOCK_MONOTONIC, deadline, 0,
					      on_paced_stalled, e);
	} else {
		/* files, terminals, devices: writes that may block, on a thread nobody else needs */
		e->kind = EXPORT_THREAD;
		r = now_plus(x->event, EXPORT_STREAM_STALL_USEC, &deadline);
		if (r >= 0)
			r = sd_event_add_time(x->event, &e->timer, CLOCK_MONOTONIC, deadline, 0,
					      on_thread_check, e);
		if (r >= 0)
			r = thread_start(e);
	}
	if (r < 0) {
		export_free(e);
		return r;
	}
	return 1;
}
