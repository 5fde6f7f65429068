/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/*
 * A command started for `profctl record -- CMD`: forked and stopped right
 * after its execve() (the child asks to be traced, so the kernel stops it
 * there), until released. Sampling is set up on the command itself — its
 * executable, name, memory and threads — before its first instruction runs.
 * While held, the command dies with profctl (PTRACE_O_EXITKILL).
 */
typedef struct HeldChild {
	pid_t pid; /* 0 once reaped */
	bool held; /* stopped at its exec, not released yet */
} HeldChild;

/*
 * Fork, exec and stop. When the command cannot run: the -errno of the step
 * that failed (-ENOENT, -EACCES, ...), named in *ret_step: "exec", or
 * "ptrace" when the kernel lets no process be traced (Yama ptrace_scope 3).
 */
int held_child_spawn(char **argv, HeldChild *ret, const char **ret_step);
/* Let the command run. */
int held_child_release(HeldChild *c);
/* Wait for the child; ret_status as waitpid() gives it. */
int held_child_wait(HeldChild *c, int *ret_status);
/* Kill (if still held or running) and reap; safe on a zeroed or reaped child. */
void held_child_abort(HeldChild *c);
/* "exited with status 3", "was killed by signal KILL" */
void held_child_describe_status(int status, char *buf, size_t size);
