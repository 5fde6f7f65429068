/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-long-life ADDRESS PROFD_PID SESSIONS PROGRAM...: a long-lived profd
 * seeing many binaries. Runs SESSIONS sessions one after another, session i
 * on a fresh process of PROGRAM[i % N] (0.15 s at 999 Hz; the programs are
 * copies of one workload with build-ids of their own), releasing each, and
 * prints every 50 sessions the RSS of profd and of its children (the
 * sandboxed unwinders, which hold the symbol cache); then for each the
 * baseline (after the first 10 sessions, once libc, the kernel's symbols and
 * the allocator's arenas are in place), the highest RSS after it and the
 * growth, as "name value unit" lines.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bus-client.h"
#include "cleanup.h"
#include "test-util.h"

#define DEST "org.profd.Profiler1"
#define SESSION_USEC 150000
#define BASELINE_AFTER 10

typedef struct RssTrack {
	const char *name;
	long baseline, highest;
} RssTrack;

static void die(const char *what, int r, const sd_bus_error *e)
{
	fprintf(stderr, "%s: %s\n", what, e && e->message ? e->message : strerror(-r));
	exit(1);
}

static pid_t spawn(const char *program)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork", -errno, NULL);
	if (pid == 0) {
		execl(program, program, "5", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The summed VmRSS of the children of 'pid' (its unwinders), in KiB. */
static long children_rss_kib(pid_t pid)
{
	char path[64];
	long sum = 0;
	int child;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fscanf(f, "%d", &child) == 1) {
		long kib = test_process_status_kib(child, "VmRSS");

		sum += kib > 0 ? kib : 0;
	}
	fclose(f);
	return sum;
}

static void track(RssTrack *t, unsigned session, long kib)
{
	if (session == BASELINE_AFTER)
		t->baseline = kib;
	if (session > BASELINE_AFTER && kib > t->highest)
		t->highest = kib;
}

static void print_track(const RssTrack *t)
{
	printf("%s_rss_baseline %ld KiB (after %d sessions)\n", t->name, t->baseline,
	       BASELINE_AFTER);
	printf("%s_rss_highest %ld KiB\n", t->name, t->highest);
	printf("%s_rss_growth %ld KiB\n", t->name, t->highest - t->baseline);
}

/* One session of 'pid': start, wait until it is no longer sampling or resolving, release. */
static void one_session(sd_bus *bus, pid_t pid)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	const char *id, *path;
	char *state = NULL;
	int r;

	r = sd_bus_call_method(bus, DEST, "/org/profd/Profiler1", "org.profd.Profiler1.Manager",
			       "StartSession", &error, &reply, "uuta{sv}", (uint32_t)pid, 999,
			       (uint64_t)SESSION_USEC, 0);
	if (r < 0)
		die("StartSession", r, &error);
	r = sd_bus_message_read(reply, "so", &id, &path);
	if (r < 0)
		die("StartSession reply", r, NULL);
	for (;;) {
		r = sd_bus_get_property_string(bus, DEST, path, "org.profd.Profiler1.Session",
					       "State", &error, &state);
		if (r < 0)
			die("State", r, &error);
		if (strcmp(state, "completed") == 0 || strcmp(state, "failed") == 0)
			break;
		free(state);
		state = NULL;
		usleep(20000);
	}
	if (strcmp(state, "completed") != 0) {
		fprintf(stderr, "session of %d %s\n", (int)pid, state);
		exit(1);
	}
	free(state);
	r = sd_bus_call_method(bus, DEST, path, "org.profd.Profiler1.Session", "Release", &error,
			       NULL, "");
	if (r < 0)
		die("Release", r, &error);
}

int main(int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	RssTrack tracks[] = { { "profd", -1, 0 }, { "unwinders", -1, 0 }, { "total", -1, 0 } };
	unsigned sessions;
	pid_t profd;
	int n_programs, r;

	if (argc < 5) {
		fprintf(stderr, "usage: bench-long-life ADDRESS PROFD_PID SESSIONS PROGRAM...\n");
		return 2;
	}
	sessions = (unsigned)strtoul(argv[3], NULL, 10);
	n_programs = argc - 4;
	profd = atoi(argv[2]);
	r = bus_client_open(argv[1], &bus);
	if (r < 0)
		die("connect", r, NULL);
	printf("profd_rss_start %ld KiB\n", test_process_status_kib(profd, "VmRSS"));
	for (unsigned i = 0; i < sessions; i++) {
		pid_t pid = spawn(argv[4 + i % (unsigned)n_programs]);
		long own, helpers;
		int status;

		usleep(20000); /* past the dynamic loader */
		one_session(bus, pid);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		own = test_process_status_kib(profd, "VmRSS");
		helpers = children_rss_kib(profd);
		track(&tracks[0], i + 1, own);
		track(&tracks[1], i + 1, helpers);
		track(&tracks[2], i + 1, own + helpers);
		if ((i + 1) % 50 == 0) {
			printf("rss_after_%u_sessions profd %ld KiB unwinders %ld KiB\n", i + 1, own,
			       helpers);
			fflush(stdout);
		}
	}
	for (size_t t = 0; t < sizeof(tracks) / sizeof(tracks[0]); t++)
		print_track(&tracks[t]);
	return 0;
}
