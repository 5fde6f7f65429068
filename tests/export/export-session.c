/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * export-session WORKLOAD DIR: run workload-split (2 threads) under a real
 * perf-dwarf sampling session for one second and write the profile in every
 * format into DIR, like export-sample does for synthetic profiles. Fails if
 * the folding does not show split_heavy() hotter than split_light(), the
 * workload's known 3:1 shape.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "export-files.h"
#include "fold.h"
#include "test-util.h"
#include "unwind-harness.h"

static uint64_t inclusive_count(const Folding *f, const char *name)
{
	const Profile *p = f->profile;
	uint64_t n = 0;

	for (size_t i = 0; i < f->n_stacks; i++)
		for (uint32_t node = f->stacks[i].node; node != PROFILE_NONE;
		     node = f->nodes[node].parent)
			if (strcmp(p->strings[f->nodes[node].function], name) == 0) {
				n += f->stacks[i].count;
				break;
			}
	return n;
}

static int record(pid_t pid, Profile **ret)
{
	const HarnessRun run = { .hz = 499, .seconds = 1, .kernel = true };
	HarnessResult res;
	int r;

	r = harness_profile(pid, &run, &res);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(res.profile);
	harness_result_done(&res);
	return 0;
}

int main(int argc, char **argv)
{
	_cleanup_profile_ Profile *p = NULL;
	_cleanup_(folding_freep) Folding *f = NULL;
	uint64_t heavy, light;
	pid_t pid;
	int r, status = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: export-session WORKLOAD DIR\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "export-session: cannot fork: %m\n");
		return 1;
	}
	if (pid == 0) {
		execl(argv[1], argv[1], "3", "2", (char *)NULL);
		_exit(127);
	}
	if (!test_wait_started(pid, "workload-split", 2)) {
		fprintf(stderr, "export-session: '%s' did not start its two threads\n", argv[1]);
		kill(pid, SIGKILL);
		return 1;
	}
	r = record(pid, &p);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (r < 0) {
		fprintf(stderr, "export-session: cannot sample '%s': %s\n", argv[1], strerror(-r));
		return 1;
	}

	r = fold_profile(p, &f);
	if (r < 0) {
		fprintf(stderr, "export-session: cannot fold: %s\n", strerror(-r));
		return 1;
	}
	heavy = inclusive_count(f, "split_heavy");
	light = inclusive_count(f, "split_light");
	fprintf(stderr, "export-session: %llu samples over %zu stacks, %u threads; "
			"split_heavy %llu, split_light %llu\n",
		(unsigned long long)f->n_samples, f->n_stacks, f->n_threads,
		(unsigned long long)heavy, (unsigned long long)light);
	if (heavy <= light || light == 0) {
		fprintf(stderr, "export-session: the folding does not show split_heavy hotter "
				"than split_light\n");
		status = 1;
	}

	return export_files(p, argv[2], "export-session") | status;
}
