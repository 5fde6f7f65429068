/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Workload processes for the C tests that sample them: start one, wait until
 * it runs its threads, read the CPU time it used, reap it; and show what a
 * session made of it.
 */

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "metrics.h"
#include "test-util.h"

#define NSEC 1000000000ULL

static inline const char *env_path(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		fprintf(stderr, "environment variable %s is not set\n", name);
		exit(EXIT_FAILURE);
	}
	return v;
}

static inline pid_t spawn(const char *path, ...)
{
	char *argv[8] = { (char *)path };
	va_list ap;
	size_t n = 1;
	pid_t pid;

	va_start(ap, path);
	while (n < ELEMENTSOF(argv) - 1 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;

	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(EXIT_FAILURE);
	}
	if (pid == 0) {
		execv(path, argv);
		_exit(127);
	}
	return pid;
}

/* Fork a child that execs argv once *ret_go is written to; it exists (not exec'ed yet) on return. */
static inline pid_t spawn_held(char *const argv[], int *ret_go)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		exit(EXIT_FAILURE);
	pid = fork();
	if (pid < 0)
		exit(EXIT_FAILURE);
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	*ret_go = go[1];
	return pid;
}

/* Wait until the target has exec'd and runs 'threads' threads. */
static inline void wait_threads(pid_t pid, unsigned threads, const char *exe_substring)
{
	if (!test_wait_started(pid, exe_substring, threads)) {
		fprintf(stderr, "target %d never reached %u threads\n", (int)pid, threads);
		exit(EXIT_FAILURE);
	}
}

/* Is the process blocked in nanosleep() or clock_nanosleep() (its /proc/PID/syscall)? */
static inline bool in_nanosleep(void *userdata)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)*(pid_t *)userdata);
	f = fopen(path, "re");
	if (!f)
		return false;
	/* "running" when on a CPU: no number */
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr == SYS_nanosleep || nr == SYS_clock_nanosleep;
}

/*
 * Wait until a started sleep(1) sleeps: on a loaded machine its exec, ld.so and
 * C library start can take longer than a short session's window.
 */
static inline void wait_asleep(pid_t pid)
{
	if (!test_wait_until(30, in_nanosleep, &pid)) {
		fprintf(stderr, "target %d never slept\n", (int)pid);
		exit(EXIT_FAILURE);
	}
}

/* CPU time the target's threads have used so far, all of them, whatever their tids (0: gone). */
static inline uint64_t target_cpu_nanos(pid_t pid)
{
	TestCpuTime t = {};

	if (test_process_cpu_time(pid, &t) < 0)
		return 0;
	return t.user_nanos + t.system_nanos;
}

typedef struct CpuSince {
	pid_t pid;
	uint64_t since, nanos;
} CpuSince;

/* Has the target used 'nanos' of CPU time since it had used 'since'? (for test_wait_until) */
static inline bool cpu_used(void *userdata)
{
	const CpuSince *c = userdata;

	return target_cpu_nanos(c->pid) >= c->since + c->nanos;
}

static inline uint64_t reap(pid_t pid)
{
	struct rusage ru;
	int status;

	kill(pid, SIGKILL);
	if (wait4(pid, &status, 0, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* Wait for the child to exit by itself; returns its CPU time. */
static inline uint64_t reap_exited(pid_t pid)
{
	struct rusage ru;
	int status;

	if (wait4(pid, &status, 0, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static inline void print_metrics(const SamplingMetrics *m)
{
	_cleanup_free_ char *json = NULL;

	if (sampling_metrics_format_json(m, &json) >= 0)
		fprintf(stderr, "%s", json);
}

/*
 * fn(arg) on a thread of its own after 'after_nanos': a stop from another thread.
 * called_unix_nanos: when it was called (CLOCK_REALTIME, as SamplingMetrics.start_unix_nanos),
 * which on a loaded machine can be well after 'after_nanos'.
 */
typedef struct DelayedCall {
	void (*fn)(void *arg);
	void *arg;
	uint64_t after_nanos;
	pthread_t thread;
	uint64_t called_unix_nanos;
} DelayedCall;

static inline void *delayed_call_main(void *userdata)
{
	DelayedCall *d = userdata;
	struct timespec ts = { .tv_sec = (time_t)(d->after_nanos / NSEC),
			       .tv_nsec = (long)(d->after_nanos % NSEC) };

	nanosleep(&ts, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	d->called_unix_nanos = (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
	d->fn(d->arg);
	return NULL;
}

static inline void delayed_call_start(DelayedCall *d)
{
	if (pthread_create(&d->thread, NULL, delayed_call_main, d) != 0)
		abort();
}

static inline void delayed_call_join(DelayedCall *d)
{
	pthread_join(d->thread, NULL);
}

/*
 * fn(arg) on a thread of its own once the target cpu.pid has used cpu.nanos of CPU time from
 * when the call was started: a window that ends by what the target did, as many samples
 * however long a loaded machine takes to give it that time. cpu_call_join() ends the wait
 * when the window ended otherwise first (the target exited, the duration passed).
 */
typedef struct CpuCall {
	void (*fn)(void *arg);
	void *arg;
	CpuSince cpu;
	bool done;
	pthread_t thread;
} CpuCall;

static inline bool cpu_call_ready(void *userdata)
{
	CpuCall *c = userdata;

	return __atomic_load_n(&c->done, __ATOMIC_ACQUIRE) || cpu_used(&c->cpu);
}

static inline void *cpu_call_main(void *userdata)
{
	CpuCall *c = userdata;

	/* no deadline of its own: the window's duration is the hang guard, and ends in join */
	while (!test_wait_until(60, cpu_call_ready, c))
		;
	if (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		c->fn(c->arg);
	return NULL;
}

/* For a CpuCall that ends the target: kill(*(pid_t *)pid, SIGKILL). */
static inline void kill_pid(void *pid)
{
	kill(*(pid_t *)pid, SIGKILL);
}

static inline void cpu_call_start(CpuCall *c)
{
	c->cpu.since = target_cpu_nanos(c->cpu.pid);
	if (pthread_create(&c->thread, NULL, cpu_call_main, c) != 0)
		abort();
}

static inline void cpu_call_join(CpuCall *c)
{
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	pthread_join(c->thread, NULL);
}
