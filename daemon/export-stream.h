/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Serving an export file to a client, so that no client can hold up
 * another (DESIGN.md §8):
 * - Export (a bounded "ay" reply): read on a worker thread.
 * - ExportToFd into a pipe or socket: copied from the event loop a few pages
 *   at a time whenever the reader has made room, never blocking (pipes take
 *   PIPE_BUF bytes once they poll writable; sockets are written with
 *   MSG_DONTWAIT). The client's descriptor flags are left alone.
 * - ExportToFd into anything else (a file, a terminal, a device): copied by a
 *   thread of its own (named EXPORT_THREAD_NAME, for top -H and the tests)
 *   with blocking writes, interrupted by a signal when the reader stalls or
 *   profd stops. No shared thread ever waits on a client.
 * A reader that takes nothing for EXPORT_STREAM_STALL_USEC is given up on.
 * Each export in progress is charged to its caller's request and fd budgets.
 */

#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "budget.h"
#include "worker-pool.h"

#define EXPORT_STREAM_STALL_USEC (30ULL * 1000000ULL)
#define EXPORT_THREAD_NAME "profd-export"

typedef struct ExportServer ExportServer;

/* 'readers' runs Export's reads; 'fds' and 'requests' are charged for each export in progress. */
int export_server_new(sd_event *event, WorkerPool *readers, Budget *fds, Budget *requests,
		      ExportServer **ret);
/* Answers every export still in progress with an error first (at exit). */
ExportServer *export_server_free(ExportServer *x);

/*
 * Answer 'm' with the content of 'in' (an export file, taken over): as "ay"
 * of at most 'max' bytes (LimitsExceeded beyond) when 'out' < 0, else copied
 * into 'out' (taken over) and answered with an empty reply once all is
 * written. Returns 1 (the reply comes later) or an error set in 'error';
 * on failure both descriptors are closed.
 */
int export_server_reply(ExportServer *x, sd_bus_message *m, int in, int out, uint64_t max,
			sd_bus_error *error);

/* Answer every export in progress with an error and stop their copies (SIGTERM). */
void export_server_cancel_all(ExportServer *x);
