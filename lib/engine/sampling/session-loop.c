/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-loop.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "time-util.h"

void session_loop_close(SessionLoop *l)
{
	session_timers_close(&l->timers);
	l->pid_fd = safe_close(l->pid_fd);
}

int session_loop_open(SessionLoop *l, pid_t pid)
{
	int r;

	r = session_timers_open(&l->timers);
	if (r < 0 || pid == 0)
		return r;
	l->pid_fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (l->pid_fd < 0)
		return errno == ESRCH ? -ESRCH : negative_errno();
	return session_timers_watch(&l->timers, l->pid_fd, SESSION_SOURCE_EXIT, 0);
}

int session_loop_arm(SessionLoop *l, uint64_t duration)
{
	l->start_unix = clock_nanos(CLOCK_REALTIME);
	l->start_mono = clock_nanos(CLOCK_MONOTONIC);
	l->deadline = l->start_mono + duration;
	return session_timers_arm(&l->timers, l->deadline, SESSION_TICK_NANOS);
}

int session_loop_start(SessionLoop *l, const SessionLoopOps *ops, void *backend)
{
	uint64_t cpu_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	int r;

	if (l->phase != SESSION_PHASE_CREATED)
		return -EALREADY;
	r = ops->start(backend);
	if (r < 0)
		return r;
	l->phase = SESSION_PHASE_SAMPLING;
	l->cpu_nanos += clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	return 0;
}

static int loop_finish(SessionLoop *l, const SessionLoopOps *ops, void *backend,
		       const char *reason)
{
	int r = ops->finish(backend, reason);

	l->phase = SESSION_PHASE_FINISHED;
	session_timers_disarm(&l->timers);
	/* an exited target's pidfd stays readable: it must not keep waking the caller's loop */
	l->pid_fd = safe_close(l->pid_fd);
	return r;
}

static int loop_step(SessionLoop *l, const SessionLoopOps *ops, void *backend)
{
	unsigned ready;
	int r;

	if (l->phase == SESSION_PHASE_FINISHED)
		return l->error < 0 ? l->error : 0;
	if (l->phase != SESSION_PHASE_SAMPLING)
		return -ENOTCONN;

	ready = session_timers_ready(&l->timers);
	r = ops->drain(backend);
	if (r < 0)
		return r;

	if (ops->budget_reached(backend))
		r = loop_finish(l, ops, backend, "buffer-full");
	else if (ready & (1U << SESSION_SOURCE_STOP))
		r = loop_finish(l, ops, backend, "stopped");
	else if (ready & (1U << SESSION_SOURCE_EXIT))
		r = loop_finish(l, ops, backend, "target-exited");
	else if ((ready & (1U << SESSION_SOURCE_DEADLINE)) ||
		 clock_nanos(CLOCK_MONOTONIC) >= l->deadline)
		r = loop_finish(l, ops, backend, "duration");
	else
		return 1;
	return r < 0 ? r : 0;
}

static int loop_fail(SessionLoop *l, const SessionLoopOps *ops, void *backend, int error)
{
	l->error = error;
	/* a failed window stops sampling; its partial profile stays readable */
	if (l->phase != SESSION_PHASE_FINISHED)
		(void)loop_finish(l, ops, backend, "failed");
	return error;
}

static int loop_step_or_fail(SessionLoop *l, const SessionLoopOps *ops, void *backend)
{
	int r = loop_step(l, ops, backend);

	return r < 0 ? loop_fail(l, ops, backend, r) : r;
}

int session_loop_process(SessionLoop *l, const SessionLoopOps *ops, void *backend)
{
	uint64_t cpu_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	int r;

	r = loop_step_or_fail(l, ops, backend);
	l->cpu_nanos += clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	return r;
}

int session_loop_run(SessionLoop *l, const SessionLoopOps *ops, void *backend)
{
	uint64_t cpu_start;
	int r;

	if (l->phase == SESSION_PHASE_CREATED) {
		r = session_loop_start(l, ops, backend);
		if (r < 0)
			return r;
	}
	/* one CPU-time reading for the whole loop, its waits included */
	cpu_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	while ((r = loop_step_or_fail(l, ops, backend)) > 0) {
		r = session_timers_wait(&l->timers);
		if (r < 0) {
			(void)loop_fail(l, ops, backend, r);
			break;
		}
	}
	l->cpu_nanos += clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	return r;
}
