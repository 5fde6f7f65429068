/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

/*
 * A command started for `profctl record -- CMD`: forked, then held before
 * execvp() until released, so sampling is set up before the command's first
 * instruction runs.
 */
typedef struct HeldChild {
	pid_t pid;      /* 0 once reaped */
	int release_fd; /* write end of the pipe the child waits on; -1 once released */
} HeldChild;

int held_child_spawn(char **argv, HeldChild *ret);
/* Let the child exec its command. */
int held_child_release(HeldChild *c);
/* Wait for the child; ret_status as waitpid() gives it. */
int held_child_wait(HeldChild *c, int *ret_status);
/* Kill (if still held or running) and reap; safe on a zeroed or reaped child. */
void held_child_abort(HeldChild *c);
/* "exited with status 3", "was killed by signal KILL" */
void held_child_describe_status(int status, char *buf, size_t size);
