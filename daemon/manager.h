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

#include "access.h"
#include "budget.h"
#include "cleanup.h"
#include "config.h"
#include "debuginfod-fetch.h"
#include "export-stream.h"
#include "inflated-debug.h"
#include "kernel-table.h"
#include "run-store.h"
#include "stack-sizes.h"
#include "symbol-cache.h"
#include "symbol-store.h"
#include "system-prewarm.h"
#include "unwinder-pool.h"
#include "worker-pool.h"

#define PROFD_BUS_NAME "org.profd.Profiler1"
#define PROFD_MANAGER_PATH "/org/profd/Profiler1"
#define PROFD_MANAGER_INTERFACE "org.profd.Profiler1.Manager"
#define PROFD_SESSION_PREFIX "/org/profd/Profiler1/session"
#define PROFD_SESSION_INTERFACE "org.profd.Profiler1.Session"

typedef struct Session Session;
typedef struct SessionRequest SessionRequest;

typedef struct Manager {
	sd_event *event;
	sd_bus *bus;
	Config config;
	char *state_dir;    /* for messages; files are reached through the fds below */
	char *sessions_dir;
	int state_fd;       /* the state directory, checked to be profd's own */
	int sessions_fd;    /* its sessions/ */
	RunStore *runs;
	WorkerPool *workers;        /* finishing sessions: exports and run records */
	WorkerPool *export_workers; /* Export reads, record parsing and reading: delay no session */
	SymbolStore *symbol_store; /* the unwinders' symbol caches on disk: state/symbols/<uid>/ */
	KernelTable *kernel_table; /* /proc/kallsyms read once, at start (prefetched) */
	SymbolStore *kernel_store; /* its table on disk: state/kernel-symbols/ (NULL: none) */
	InflatedDebug *inflated_debug; /* state/inflated-debug/: system debug files, inflated once */
	SystemPrewarm *system_prewarm; /* the system C library's work done once, at start */
	DebuginfodFetch *debuginfod; /* missing debug files from debuginfod; NULL: none */
	StackSizes *stack_sizes;   /* the stack copy each caller's programs need: state/stack-sizes */
	UnwinderPool *unwinders; /* the sandboxed unwinders, one per caller uid */
	uint32_t max_hz;           /* the config's, lowered to the kernel's limit */
	Budget *fds;      /* descriptors of sampling sessions and export streams, per uid */
	Budget *requests; /* SubmitRun/GetRun/Export/ExportToFd in progress, per uid */
	ExportServer *exports; /* Export and ExportToFd in progress */

	Session **sessions; /* oldest first */
	size_t n_sessions, n_allocated;

	/* StartSession of units waiting for systemd (manager-unit.c) */
	sd_bus *system_bus; /* where systemd is asked; opened on first use */
	struct PendingStart **pending_starts;
	size_t n_pending_starts, n_pending_starts_allocated;

	/* the orderly exit (manager-stop.c) */
	bool stopping;               /* stop sessions, exit once nothing is busy */
	bool exited;                 /* the loop has ended: calls still arriving are refused */
	int exit_status;
	sd_bus_slot *releasing_name; /* ReleaseName sent, its reply still to come */
	sd_event_source *stop_check; /* after every dispatch while stopping: exit once idle */
	sd_event_source *stop_timeout;
} Manager;

/* Set up state (state dir, run store, saved sessions); takes over *config. */
int manager_new(sd_event *event, Config *config, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

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

/* A session closed its perf events: return its share of the fd budget (idempotent). */
void manager_release_session_fds(Manager *m, Session *s);

/*
 * A request that holds memory or descriptors until it is answered (SubmitRun,
 * GetRun, Export, ExportToFd): 0 and the sender's uid, or an error set in
 * 'error' (LimitsExceeded) when the sender or everyone has too many in progress.
 * Each success is paired with manager_request_end().
 */
int manager_request_begin(Manager *m, sd_bus_message *msg, uid_t *ret_uid, sd_bus_error *error);
void manager_request_end(Manager *m, uid_t uid);

/* An a{sv} option's value of D-Bus type 'type' into 'ret' (InvalidArgs naming 'key' for another type). */
int manager_read_option(sd_bus_message *msg, const char *key, char type, void *ret,
			sd_bus_error *error);
/*
 * StartSession's options, one at a time: 1 when 'key' is one of them (its
 * value read into 'req', *kernel set to 0 or 1 for "kernel"), 0 when it is not.
 */
int manager_read_session_option(sd_bus_message *msg, const char *key, SessionRequest *req,
				int *kernel, sd_bus_error *error);
/* StartSession's option names, for messages. */
#define MANAGER_SESSION_OPTIONS \
	"backend, event, kernel, stack_bytes, ring_capacity, workload_class, stop_on_disconnect"
/* One option of an a{sv}: 1 when 'key' is one (its value read), 0 when it is not, or an error. */
typedef int (*ManagerOptionFn)(sd_bus_message *msg, const char *key, void *userdata,
			       sd_bus_error *error);
/* Read an a{sv} of options through 'fn'; a key it does not know is InvalidArgs listing 'known'. */
int manager_parse_options(sd_bus_message *msg, ManagerOptionFn fn, void *userdata, const char *known,
			  sd_bus_error *error);
int manager_validate_session_request(const SessionRequest *req, sd_bus_error *error);
/*
 * StartSession of req->unit: its cgroup is asked of systemd without blocking,
 * the call answered then (1: under way), or a bus error now.
 */
int manager_start_unit_session(Manager *m, sd_bus_message *msg, const SessionRequest *req,
			       int kernel, sd_bus_error *error);
/* Answer the StartSession calls still waiting for systemd: profd is stopping. */
void manager_fail_unit_sessions(Manager *m);

/* The credentials of whoever sent the start 'msg'; a bus error (NotReady) once profd stops. */
int manager_start_caller(Manager *m, sd_bus_message *msg, CallerCreds *ret, sd_bus_error *error);
/*
 * Start a session of process req->pid for the sender of 'msg': check its
 * access and the limits (kernel: -1 or the "kernel" option), charge its
 * descriptors, start it. Errors are set in 'error'.
 */
int manager_start_session(Manager *m, sd_bus_message *msg, SessionRequest *req, int kernel,
			  Session **ret, sd_bus_error *error);

/*
 * Begin an orderly exit with 'exit_status' (the first stop's counts): release
 * the bus name, stop sampling, exit once nothing is busy and every call read
 * was answered (or after a timeout).
 */
void manager_begin_stop(Manager *m, int exit_status);
/* Called when a session stops being busy; finishes the exit when stopping. */
void manager_check_idle(Manager *m);
/* On 'm->bus': the loss of the bus begins a stop (exit status 1); calls after the loop are refused. */
int manager_add_stop_handlers(Manager *m);
/* After the loop: answer what reached profd anyway (to its unique name) with NoServer. */
void manager_refuse_remaining_calls(Manager *m);

void manager_update_status(Manager *m);
