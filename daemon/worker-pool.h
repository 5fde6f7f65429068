/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Work that must not run on the bus dispatch path (writing a session's
 * exports, copying an export into a client's pipe) runs on a few threads;
 * its completion callback runs back on the sd-event loop, the only thread
 * that touches sd-bus and the daemon's state.
 */

#include <systemd/sd-event.h>

#include "cleanup.h"

typedef struct WorkerPool WorkerPool;

typedef void (*WorkFn)(void *userdata);     /* on a worker thread */
typedef void (*WorkDoneFn)(void *userdata); /* on the event loop, after WorkFn returned */

int worker_pool_new(sd_event *event, unsigned n_threads, WorkerPool **ret);
/* Finishes queued work, joins the threads, then runs the remaining completions. */
WorkerPool *worker_pool_free(WorkerPool *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(WorkerPool *, worker_pool_free);

int worker_pool_submit(WorkerPool *p, WorkFn work, WorkDoneFn done, void *userdata);
