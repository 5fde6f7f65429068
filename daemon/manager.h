/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's state, and the org.profd.Profiler1.Manager object at
 * /org/profd/Profiler1: starting sessions, listing them, and the run store.
 * Everything here runs on the sd-event loop thread.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "run-store.h"
#include "symbol-cache.h"
#include "worker-pool.h"

#define PROFD_BUS_NAME "org.profd.Profiler1"
#define PROFD_MANAGER_PATH "/org/profd/Profiler1"
#define PROFD_MANAGER_INTERFACE "org.profd.Profiler1.Manager"
#define PROFD_SESSION_PREFIX "/org/profd/Profiler1/session"
#define PROFD_SESSION_INTERFACE "org.profd.Profiler1.Session"

typedef struct Session Session;

typedef struct Manager {
	sd_event *event;
	sd_bus *bus;
	Config config;
	char *state_dir;
	char *sessions_dir;
	RunStore *runs;
	WorkerPool *workers;        /* finishing sessions: exports and run records */
	WorkerPool *export_workers; /* Export reads, ExportToFd into files: delay no session */
	SymbolCache *symbols; /* names by build-id and address, shared by all sessions */
	uint32_t max_hz;           /* the config's, lowered to the kernel's limit */

	Session **sessions; /* oldest first */
	size_t n_sessions, n_allocated;

	bool stopping; /* SIGTERM: stop sessions, exit when none is busy */
} Manager;

/* Set up state (state dir, run store, saved sessions); takes over *config. */
int manager_new(sd_event *event, Config *config, Manager **ret);
Manager *manager_free(Manager *m);
void manager_freep(Manager **m);

/* Export the objects on 'bus' and take the bus name. */
int manager_connect_bus(Manager *m, sd_bus *bus);

int manager_add_session(Manager *m, Session *s);
/* Forget 's' (it is not freed). */
void manager_remove_session(Manager *m, Session *s);
Session *manager_find_session(Manager *m, const char *id);
/* Sessions sampling or resolving, of one uid or (uid == (uid_t)-1) of everyone. */
unsigned manager_count_busy_sessions(Manager *m, uid_t uid);
/* Drop finished sessions beyond the cap, oldest first. */
void manager_trim_finished_sessions(Manager *m);

/* Begin an orderly exit: stop sampling, exit once nothing is busy. */
void manager_begin_stop(Manager *m);
/* Called when a session stops being busy; finishes the exit when stopping. */
void manager_check_idle(Manager *m);

void manager_update_status(Manager *m);
