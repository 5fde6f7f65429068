/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * profd's side of the sandboxed unwinders (DESIGN.md §8): one profd-unwinder
 * per caller uid, started on demand with every capability dropped and
 * NO_NEW_PRIVS (it then installs its own seccomp filter and Landlock domain),
 * under an address-space limit. A session's collector hands its backlog to
 * the unwinder of its owner; profd serves the unwinder's file requests for
 * that session's target only (collector_open_target_file()), and takes its
 * counters and its profile (a memfd) as claims to check, never as facts.
 *
 * An unwinder that crashes, hits its memory limit or shows no sign of life
 * for the configured time while it has work is killed if needed; each of its
 * sessions goes on with a new one from where its backlog stands, told first
 * what the records it took said of the target (collector_consumer_restart():
 * the samples it took are lost and counted), a few times per session at most,
 * then the session fails. One that says something impossible fails the
 * sessions of its uid in flight. Other users' unwinders never notice. A
 * killed unwinder's exit is never waited for on the loop (only at
 * unwinder_pool_free(), a few seconds at most); one not reaped 30 s after
 * SIGKILL is given up, its sessions failed. Everything here runs on the
 * event loop, but unwinder_pool_reaped_pid().
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "collector.h"
#include "symbol-cache.h"

typedef struct UnwinderPool UnwinderPool;

typedef struct UnwinderPoolOptions {
	const char *path;       /* the profd-unwinder program */
	uint64_t timeout_usec;  /* no message from an unwinder with work for this long: it hangs */
	uint64_t memory_bytes;  /* its RLIMIT_AS; 0 = none */
	uint64_t idle_usec;     /* an unwinder without sessions this long goes (its caches too) */
	uint64_t cache_max_bytes; /* each unwinder's symbol cache keeps at most this much */
	/* the symbol cache on disk (symbol-store.h): each unwinder saves only into its own uid's
	 * directory, whatever it asks, and loads from there, else from what profd alone wrote
	 * (the shared directory: system-prewarm.h); NULL: none. Must outlive the pool. */
	const SymbolCacheStore *store;
} UnwinderPoolOptions;

/*
 * The unwinder ended a session: 'profile_fd' (taken over; -1 on error) holds
 * its profile file, unchecked. collector_consumer_done() was called already.
 */
typedef void (*UnwinderDoneFn)(void *userdata, int profile_fd, int error, const char *why);

int unwinder_pool_new(sd_event *event, const UnwinderPoolOptions *options, UnwinderPool **ret);
UnwinderPool *unwinder_pool_free(UnwinderPool *p);

typedef struct UnwinderSessionInfo {
	uid_t owner;
	uint32_t pid;    /* the target; 0: the processes of a cgroup (each file request names one) */
	bool dwarf;      /* perf-dwarf (else the FP callchain) */
	bool kernel;     /* kernel frames (and kallsyms) for this caller */
} UnwinderSessionInfo;

/*
 * Hand the started 'collector' (unwind_elsewhere) to the unwinder of
 * info->owner, starting one if needed; 'done' runs once, on the loop. The
 * collector must outlive the attachment: unwinder_pool_detach() before
 * freeing it while it is attached. *ret_id names the attachment.
 */
int unwinder_pool_attach(UnwinderPool *p, const UnwinderSessionInfo *info, Collector *collector,
			 UnwinderDoneFn done, void *userdata, uint64_t *ret_id);
/* Forget an attachment ('done' will not run); the unwinder drops the session. */
void unwinder_pool_detach(UnwinderPool *p, uint64_t id);

/*
 * A session of 'uid' ended and its unwinder took its backlog 'b' to the end
 * (collector_take_backlog(); NULL: none, the one kept stays): kept for uid's next session while
 * that unwinder lives, so the next one's records land on pages already there.
 * Only ever handed to the same uid's sessions: that unwinder had its memfd.
 */
void unwinder_pool_keep_backlog(UnwinderPool *p, uid_t uid, Backlog *b);
/* The backlog kept for uid (the caller owns it), or NULL. */
Backlog *unwinder_pool_take_backlog(UnwinderPool *p, uid_t uid);

/*
 * profd is stopping: an unwinder whose sessions are not done within
 * 'timeout_usec' from now is killed (they fail with that reason), so that
 * they end within the stop's wait instead of being cut off by it, whether it
 * hangs or keeps talking without finishing.
 */
void unwinder_pool_hurry(UnwinderPool *p, uint64_t timeout_usec);

/*
 * Was 'pid' one of the last few hundred unwinders the pool reaped (its
 * samples are not the machine's: session_target_admit_system())? Those not
 * reaped are profd's children still, as /proc says. Safe from any thread.
 */
bool unwinder_pool_reaped_pid(UnwinderPool *p, pid_t pid);
