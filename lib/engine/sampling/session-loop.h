/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The life of a sampling window, the same for every backend: created, then
 * sampling, then finished. Each step drains what the kernel wrote and then
 * sees whether the window ended, and why: the sample budget, a stop request,
 * the target's exit, the deadline. A failed step ends the window ("failed");
 * later steps report that error again. The backend's own CPU time is counted
 * around every call.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "session-timers.h"

typedef enum SessionPhase {
	SESSION_PHASE_CREATED,
	SESSION_PHASE_SAMPLING,
	SESSION_PHASE_FINISHED,
} SessionPhase;

/* What the backend does for the loop; 'backend' is the argument given to the loop. */
typedef struct SessionLoopOps {
	/* the window starts: session_loop_arm(), then enable the events */
	int (*start)(void *backend);
	/* read what the kernel wrote so far */
	int (*drain)(void *backend);
	/* the sample budget is used up (read after drain) */
	bool (*budget_reached)(void *backend);
	/* stop sampling and keep what was taken; the loop then marks the window finished and
	 * quiets its fds */
	int (*finish)(void *backend, const char *reason);
} SessionLoopOps;

/* Drain at least this often, so live metrics stay current while buffers fill slowly. */
#define SESSION_TICK_NANOS (250ULL * 1000000ULL)

/* The target's exit, watched with one target process (session_loop_open()). */
#define SESSION_SOURCE_EXIT SESSION_SOURCE_OWN
/* The first source number free for the backend. */
#define SESSION_SOURCE_BACKEND (SESSION_SOURCE_OWN + 1U)

typedef struct SessionLoop {
	SessionTimers timers;
	int pid_fd;           /* the target's exit, with one target process */
	SessionPhase phase;
	uint64_t deadline;    /* CLOCK_MONOTONIC; UINT64_MAX before the start */
	uint64_t start_mono, start_unix; /* the window's start, 0 before it */
	int error;            /* the failure that ended the window, or 0 */
	uint64_t cpu_nanos;   /* the backend's own CPU time, from creation on */
} SessionLoop;

#define SESSION_LOOP_NULL \
	((SessionLoop){ .timers = SESSION_TIMERS_NULL, .pid_fd = -1, .deadline = UINT64_MAX })

/*
 * Open the timers; with one target process 'pid' (0: many), the window also ends when it
 * exits, even when it is not our child (-ESRCH: gone).
 */
int session_loop_open(SessionLoop *l, pid_t pid);
void session_loop_close(SessionLoop *l);
/* The window starts now and ends 'duration' nanoseconds later; ticks start now. */
int session_loop_arm(SessionLoop *l, uint64_t duration);

/* The deadline while sampling, UINT64_MAX before and after. */
static inline uint64_t session_loop_deadline(const SessionLoop *l)
{
	return l->phase == SESSION_PHASE_SAMPLING ? l->deadline : UINT64_MAX;
}

/* Start the window once (-EALREADY after). */
int session_loop_start(SessionLoop *l, const SessionLoopOps *ops, void *backend);
/* One step without blocking: > 0 while sampling, 0 once finished, < 0 on failure. */
int session_loop_process(SessionLoop *l, const SessionLoopOps *ops, void *backend);
/* Start if not started, then step and wait until the window ends. */
int session_loop_run(SessionLoop *l, const SessionLoopOps *ops, void *backend);

/* prefix_STEP() of a backend: session_loop_STEP() on its loop, -EINVAL without a backend. */
#define SESSION_LOOP_DEFINE_STEP(Type, prefix, step, ops)                                   \
	int prefix##_##step(Type *s)                                                        \
	{                                                                                   \
		return s ? session_loop_##step(&s->loop, &(ops), s) : -EINVAL;              \
	}

/*
 * The public calls of a backend over its loop: for 'Type' with a SessionLoop member 'loop'
 * driven by 'ops', defines prefix_start(), _process() and _run(), prefix_stop() (only
 * write(): callable from signal handlers and other threads), prefix_get_fd(),
 * _get_deadline() and _is_finished(). Each backend has the same seven.
 */
#define SESSION_LOOP_DEFINE_CALLS(Type, prefix, ops)                                        \
	SESSION_LOOP_DEFINE_STEP(Type, prefix, start, ops)                                  \
	SESSION_LOOP_DEFINE_STEP(Type, prefix, process, ops)                                \
	SESSION_LOOP_DEFINE_STEP(Type, prefix, run, ops)                                    \
	void prefix##_stop(Type *s)                                                         \
	{                                                                                   \
		if (s)                                                                      \
			session_timers_stop(&s->loop.timers);                               \
	}                                                                                   \
	int prefix##_get_fd(const Type *s)                                                  \
	{                                                                                   \
		return s ? s->loop.timers.epoll_fd : -EINVAL;                               \
	}                                                                                   \
	uint64_t prefix##_get_deadline(const Type *s)                                       \
	{                                                                                   \
		return s ? session_loop_deadline(&s->loop) : UINT64_MAX;                    \
	}                                                                                   \
	bool prefix##_is_finished(const Type *s)                                            \
	{                                                                                   \
		return s && s->loop.phase == SESSION_PHASE_FINISHED;                        \
	}
