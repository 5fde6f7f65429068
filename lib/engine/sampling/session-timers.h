/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What every sampling backend waits on besides its own events, in one epoll
 * set: a stop request (an eventfd, so stopping is async-signal-safe), the
 * deadline and a periodic tick (timerfds). Backends add their own fds with
 * session_timers_watch() under sources of their own (bits 8 and up).
 */

#include <stdint.h>
#include <time.h>

#define SESSION_SOURCE_STOP 0U
#define SESSION_SOURCE_DEADLINE 1U
#define SESSION_SOURCE_TICK 2U
#define SESSION_SOURCE_OWN 8U /* first source number free for the backend */

typedef struct SessionTimers {
	int epoll_fd, stop_fd, deadline_fd, tick_fd;
} SessionTimers;

#define SESSION_TIMERS_NULL ((SessionTimers){ -1, -1, -1, -1 })

int session_timers_open(SessionTimers *t);
void session_timers_close(SessionTimers *t);
/* Watch 'fd' (level-triggered EPOLLIN, or 'events') as 'source' (< 32). */
int session_timers_watch(SessionTimers *t, int fd, unsigned source, uint32_t events);
/* Deadline at CLOCK_MONOTONIC 'deadline', a tick every 'tick_nanos'. */
int session_timers_arm(SessionTimers *t, uint64_t deadline, uint64_t tick_nanos);
/* Quiet: no deadline, no tick, no pending stop (a finished session must not wake its caller). */
void session_timers_disarm(SessionTimers *t);
/* Thread- and async-signal-safe: only write()s the eventfd. */
void session_timers_stop(const SessionTimers *t);
/* The sources ready now, as a bitmask of 1U << source, in one syscall; a pending tick is consumed. */
unsigned session_timers_ready(const SessionTimers *t);
/* Block until something is ready (EINTR is not an error). */
int session_timers_wait(const SessionTimers *t);
