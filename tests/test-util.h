/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Checks shared by the C tests: a failed CHECK reports where, the condition and
 * what differed, then the test goes on so one run shows every failure.
 *
 * And what keeps a test valid on a loaded machine (tests/README.md): the CPU
 * time a target actually got, and waiting for a condition instead of sleeping.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "time-util.h"

static int test_failures __attribute__((unused));

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			test_failures++;                                                   \
		}                                                                          \
	} while (0)

/* The exit status of a test: failure when any check failed, with their count. */
static inline int test_result(void)
{
	if (test_failures > 0)
		fprintf(stderr, "%d check(s) failed\n", test_failures);
	return test_failures > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* A process's CPU time so far, all its threads, split as the kernel accounts it. */
typedef struct TestCpuTime {
	uint64_t user_nanos;
	uint64_t system_nanos;
} TestCpuTime;

static inline int test_process_cpu_time(pid_t pid, TestCpuTime *ret)
{
	unsigned long long utime, stime;
	long tick = sysconf(_SC_CLK_TCK);
	char path[64], buf[1024], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno > 0 ? -errno : -EIO;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold anything, ") " too: the fields follow its last ')' */
	p = strrchr(buf, ')');
	if (!p || tick <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
		   &stime) != 2)
		return -EBADMSG;
	*ret = (TestCpuTime){
		.user_nanos = utime * 1000000000ULL / (unsigned long long)tick,
		.system_nanos = stime * 1000000000ULL / (unsigned long long)tick,
	};
	return 0;
}

/* A "Vm...:" field of /proc/PID/status in KiB (e.g. "VmRSS"); -1 when unreadable. */
static inline long test_process_status_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t len = strlen(field);
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, len) == 0 && line[len] == ':' &&
		    sscanf(line + len + 1, " %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* user + system nanoseconds from 'a' to 'b' */
static inline uint64_t test_cpu_time_spent(const TestCpuTime *a, const TestCpuTime *b)
{
	return (b->user_nanos + b->system_nanos) - (a->user_nanos + a->system_nanos);
}

/*
 * Poll 'cond' every millisecond until it holds; false if it still does not
 * after 'seconds'. The deadline only guards against a hang: make it generous,
 * a loaded machine is slow, not stuck.
 */
static inline bool test_wait_until(double seconds, bool (*cond)(void *userdata), void *userdata)
{
	uint64_t deadline = clock_nanos(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);

	while (!cond(userdata)) {
		if (clock_nanos(CLOCK_MONOTONIC) > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

typedef struct TestStarted {
	pid_t pid;
	const char *exe_substring;
	unsigned threads;
} TestStarted;

/* Has the process exec'd a program whose path holds exe_substring, and does it run 'threads'? */
static inline bool test_process_started(void *userdata)
{
	const TestStarted *st = userdata;
	char fn[64], exe[4096] = "", line[256];
	unsigned n = 0;
	ssize_t len;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)st->pid);
	len = readlink(fn, exe, sizeof(exe) - 1);
	if (len <= 0)
		return false;
	exe[len] = '\0';
	if (!strstr(exe, st->exe_substring))
		return false;
	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)st->pid);
	f = fopen(fn, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n >= st->threads;
}

/* Wait until a spawned target runs its program with 'threads' threads (past fork and exec). */
static inline bool test_wait_started(pid_t pid, const char *exe_substring, unsigned threads)
{
	TestStarted st = { pid, exe_substring, threads };

	return test_wait_until(30, test_process_started, &st);
}

/* The path of the C library this program runs with, from its own mappings (NULL: none). */
static inline char *test_own_libc(void)
{
	char line[4096], path[4096], *found = NULL;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", path) == 1 && strstr(path, "/libc.so"))
			found = strdup(path);
	if (f)
		fclose(f);
	return found;
}

/* A test program of several cases: main() runs the one named by argv[1]. */
typedef struct TestCase {
	const char *name;
	int (*fn)(void);
} TestCase;

static inline int test_run_case(int argc, char **argv, const TestCase *cases, size_t n)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CASE\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(cases[i].name, argv[1]) == 0)
			return cases[i].fn();
	fprintf(stderr, "unknown case '%s'\n", argv[1]);
	return 2;
}
