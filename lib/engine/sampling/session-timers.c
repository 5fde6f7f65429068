/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-timers.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cleanup.h"
#include "time-util.h"


void session_timers_close(SessionTimers *t)
{
	t->epoll_fd = safe_close(t->epoll_fd);
	t->stop_fd = safe_close(t->stop_fd);
	t->deadline_fd = safe_close(t->deadline_fd);
	t->tick_fd = safe_close(t->tick_fd);
}

int session_timers_watch(SessionTimers *t, int fd, unsigned source, uint32_t events)
{
	if (source >= 32)
		return -EINVAL;
	if (epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, fd,
		      &(struct epoll_event){ .events = events ?: EPOLLIN, .data.u32 = source }) < 0)
		return negative_errno();
	return 0;
}

int session_timers_open(SessionTimers *t)
{
	int r;

	*t = SESSION_TIMERS_NULL;
	t->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	t->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->deadline_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	t->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (t->epoll_fd < 0 || t->stop_fd < 0 || t->deadline_fd < 0 || t->tick_fd < 0) {
		r = negative_errno();
		session_timers_close(t);
		return r;
	}
	r = session_timers_watch(t, t->stop_fd, SESSION_SOURCE_STOP, 0);
	if (r >= 0)
		r = session_timers_watch(t, t->deadline_fd, SESSION_SOURCE_DEADLINE, 0);
	if (r >= 0)
		r = session_timers_watch(t, t->tick_fd, SESSION_SOURCE_TICK, 0);
	if (r < 0)
		session_timers_close(t);
	return r;
}

static int timer_arm(int fd, uint64_t first_nanos, uint64_t interval_nanos, int flags)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(first_nanos / NSEC_PER_SEC),
			      .tv_nsec = (long)(first_nanos % NSEC_PER_SEC) },
		.it_interval = { .tv_sec = (time_t)(interval_nanos / NSEC_PER_SEC),
				 .tv_nsec = (long)(interval_nanos % NSEC_PER_SEC) },
	};

	if (timerfd_settime(fd, flags, &its, NULL) < 0)
		return negative_errno();
	return 0;
}

int session_timers_arm(SessionTimers *t, uint64_t deadline, uint64_t tick_nanos)
{
	int r = timer_arm(t->deadline_fd, deadline, 0, TFD_TIMER_ABSTIME);

	return r < 0 ? r : timer_arm(t->tick_fd, tick_nanos, tick_nanos, 0);
}

static void fd_consume(int fd)
{
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
}

void session_timers_disarm(SessionTimers *t)
{
	(void)timer_arm(t->tick_fd, 0, 0, 0);
	(void)timer_arm(t->deadline_fd, 0, 0, 0);
	fd_consume(t->stop_fd);
}

void session_timers_stop(const SessionTimers *t)
{
	uint64_t one = 1;

	if (t->stop_fd >= 0)
		(void)!write(t->stop_fd, &one, sizeof(one));
}

unsigned session_timers_ready(const SessionTimers *t)
{
	struct epoll_event ev[16];
	unsigned ready = 0;
	int n;

	n = epoll_wait(t->epoll_fd, ev, ELEMENTSOF(ev), 0);
	for (int i = 0; i < n; i++)
		ready |= 1U << ev[i].data.u32;
	if (ready & (1U << SESSION_SOURCE_TICK))
		fd_consume(t->tick_fd);
	return ready;
}

int session_timers_wait(const SessionTimers *t)
{
	struct epoll_event ev[8];

	if (epoll_wait(t->epoll_fd, ev, ELEMENTSOF(ev), -1) < 0 && errno != EINTR)
		return negative_errno();
	return 0;
}
