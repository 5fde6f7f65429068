/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "export-stream.h"
#include "log.h"

/* Pages written per wake-up at most, so one fast reader cannot hog the loop. */
#define EXPORT_STREAM_SLICE 16

typedef struct ExportStream {
	struct ExportStream *next, *prev;
	sd_bus_message *message;
	int in, out;
	sd_event_source *io, *timer;
	char buf[PIPE_BUF];
	size_t len, off;
} ExportStream;

/* Streams in progress, so that shutting down can answer and free them. */
static ExportStream *streams;

static void export_stream_free(ExportStream *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else if (streams == x)
		streams = x->next;
	if (x->next)
		x->next->prev = x->prev;
	sd_event_source_disable_unref(x->io);
	sd_event_source_disable_unref(x->timer);
	sd_bus_message_unref(x->message);
	safe_close(x->in);
	safe_close(x->out);
	free(x);
}

/* Answer the client and forget the stream. */
static void export_stream_end(ExportStream *x, int error)
{
	/*
	 * Close our end first so the reader sees EOF no later than the reply;
	 * but leave epoll before: a closed fd cannot be removed from it, and
	 * the pipe (alive through other copies) would go on waking a freed source.
	 */
	x->io = sd_event_source_disable_unref(x->io);
	x->out = safe_close(x->out);
	if (error == -ETIMEDOUT)
		sd_bus_reply_method_errnof(x->message, error,
					   "the reader of the export took nothing for %llu s; gave up",
					   EXPORT_STREAM_STALL_USEC / 1000000ULL);
	else if (error < 0)
		sd_bus_reply_method_errnof(x->message, error, "cannot export: %s", strerror(-error));
	else
		sd_bus_reply_method_return(x->message, NULL);
	export_stream_free(x);
}

static int writable_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLOUT);
}

/*
 * Each write is at most PIPE_BUF bytes and made only when the descriptor
 * polls writable: a pipe then takes it without blocking even if the client
 * left it in blocking mode (its flags are the client's: we must not change them).
 */
static int on_writable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	ExportStream *x = userdata;
	uint64_t now;

	if (revents & (EPOLLERR | EPOLLHUP)) {
		export_stream_end(x, -EPIPE);
		return 0;
	}
	for (int i = 0; i < EXPORT_STREAM_SLICE && writable_now(x->out); i++) {
		ssize_t n;

		if (x->off == x->len) {
			n = read(x->in, x->buf, sizeof(x->buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				export_stream_end(x, n < 0 ? negative_errno() : 0);
				return 0;
			}
			x->len = (size_t)n;
			x->off = 0;
		}
		n = write(x->out, x->buf + x->off, x->len - x->off);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			export_stream_end(x, negative_errno());
			return 0;
		}
		x->off += (size_t)n;
	}
	/* progress: the stall clock starts again */
	if (sd_event_now(sd_event_source_get_event(s), CLOCK_MONOTONIC, &now) >= 0)
		sd_event_source_set_time(x->timer, now + EXPORT_STREAM_STALL_USEC);
	return 0;
}

static int on_stalled(sd_event_source *s, uint64_t usec, void *userdata)
{
	export_stream_end(userdata, -ETIMEDOUT);
	return 0;
}

int export_stream_start(sd_event *event, sd_bus_message *m, int in, int out)
{
	ExportStream *x = calloc(1, sizeof(*x));
	uint64_t now;
	int r;

	if (!x) {
		safe_close(in);
		safe_close(out);
		return -ENOMEM;
	}
	x->in = in;
	x->out = out;
	x->message = sd_bus_message_ref(m);
	r = sd_event_now(event, CLOCK_MONOTONIC, &now);
	if (r >= 0)
		r = sd_event_add_io(event, &x->io, out, EPOLLOUT, on_writable, x);
	if (r >= 0)
		r = sd_event_add_time(event, &x->timer, CLOCK_MONOTONIC,
				      now + EXPORT_STREAM_STALL_USEC, 0, on_stalled, x);
	if (r < 0) {
		export_stream_free(x);
		return r;
	}
	x->next = streams;
	if (streams)
		streams->prev = x;
	streams = x;
	return 0;
}

void export_stream_cancel_all(void)
{
	while (streams)
		export_stream_end(streams, -ECANCELED);
}
