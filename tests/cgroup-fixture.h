/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A cgroup of the test's own beneath the cgroup2 mount (root needed), and
 * workloads started in it: the child moves itself in before it execs, as a
 * service manager does. Done: its processes killed, the directory removed.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampling-target.h"
#include "workload-process.h"

typedef struct CgroupFixture {
	char *name;  /* relative to the mount, "/" first: what a target takes */
	char *dir;   /* absolute */
	char *procs; /* its cgroup.procs */
} CgroupFixture;

static inline void cgroup_fixture_new(CgroupFixture *c)
{
	static unsigned serial;
	char *mount = NULL;

	if (cgroup2_mount_point(&mount) < 0) {
		fprintf(stderr, "no cgroup2 mount\n");
		exit(EXIT_FAILURE);
	}
	if (asprintf(&c->name, "/profd-test-%d-%u", (int)getpid(), serial++) < 0 ||
	    asprintf(&c->dir, "%s%s", mount, c->name) < 0 ||
	    asprintf(&c->procs, "%s/cgroup.procs", c->dir) < 0)
		exit(EXIT_FAILURE);
	free(mount);
	if (mkdir(c->dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "cannot create cgroup '%s': %m\n", c->dir);
		exit(EXIT_FAILURE);
	}
}

/* Start argv (NULL-terminated after path) inside the cgroup. */
static inline pid_t cgroup_fixture_spawn(CgroupFixture *c, const char *path, ...)
{
	char *argv[8] = { (char *)path };
	size_t n = 1;
	va_list ap;
	pid_t pid;

	va_start(ap, path);
	while (n < 7 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		exit(EXIT_FAILURE);
	if (pid == 0) {
		FILE *f = fopen(c->procs, "we");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
			_exit(126);
		execv(path, argv);
		_exit(127);
	}
	return pid;
}

static inline void cgroup_fixture_done(CgroupFixture *c)
{
	FILE *f;
	int pid;

	if (!c->dir)
		return;
	/* what is still inside: killed and reaped if ours */
	f = fopen(c->procs, "re");
	while (f && fscanf(f, "%d", &pid) == 1) {
		kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
	}
	if (f)
		fclose(f);
	for (int i = 0; i < 100 && rmdir(c->dir) < 0 && errno == EBUSY; i++)
		usleep(10 * 1000);
	free(c->name);
	free(c->dir);
	free(c->procs);
}

/*
 * A cgroup window in the workloads' CPU time, however loaded the machine: the process
 * 'inside' runs 0.1 s of it sampled, then 'path' (one thread, 300 s) starts inside mid-session,
 * and stop(stop_arg) ends the window once that one has run 0.2 s (~40 samples at 199 Hz).
 */
typedef struct CgroupLateJoin {
	CgroupFixture *cg;
	const char *path;
	pid_t inside;
	void (*stop)(void *arg);
	void *stop_arg;
	pid_t late; /* the one that joined */
	pthread_t thread;
} CgroupLateJoin;

static inline void *cgroup_late_join_main(void *userdata)
{
	CgroupLateJoin *j = userdata;
	const char *exe = strrchr(j->path, '/') ? strrchr(j->path, '/') + 1 : j->path;
	CpuSince used = { .pid = j->inside, .since = target_cpu_nanos(j->inside), .nanos = NSEC / 10 };

	if (!test_wait_until(60, cpu_used, &used))
		fprintf(stderr, "the process inside never ran 0.1 s\n");
	j->late = cgroup_fixture_spawn(j->cg, j->path, "300", "1", NULL); /* moves in, then execs */
	if (!test_wait_started(j->late, exe, 1))
		fprintf(stderr, "the late process never started\n");
	used = (CpuSince){ .pid = j->late, .since = target_cpu_nanos(j->late), .nanos = NSEC / 5 };
	if (!test_wait_until(60, cpu_used, &used))
		fprintf(stderr, "the late process never ran 0.2 s\n");
	j->stop(j->stop_arg);
	return NULL;
}

static inline void cgroup_late_join_start(CgroupLateJoin *j)
{
	if (pthread_create(&j->thread, NULL, cgroup_late_join_main, j) != 0)
		abort();
}

/* Once the window is over: the process that joined. */
static inline pid_t cgroup_late_join_finish(CgroupLateJoin *j)
{
	pthread_join(j->thread, NULL);
	return j->late;
}
