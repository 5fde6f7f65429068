/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "held-child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

static int wait_status(pid_t pid, int *ret_status)
{
	while (waitpid(pid, ret_status, 0) < 0)
		if (errno != EINTR)
			return negative_errno();
	return 0;
}

/* What the child reports when it cannot run the command. */
typedef struct ChildFailure {
	int step; /* 0: ptrace(PTRACE_TRACEME), 1: execvp() */
	int error;
} ChildFailure;

int held_child_spawn(char **argv, HeldChild *ret, const char **ret_step)
{
	_cleanup_close_ int err_r = -1;
	ChildFailure failure = {};
	int fds[2], status, r;
	ssize_t n;
	pid_t pid;

	/* the child reports why it could not run the command here; exec closes it */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return negative_errno();
	err_r = fds[0];
	pid = fork();
	if (pid < 0) {
		r = negative_errno();
		safe_close(fds[1]);
		return r;
	}
	if (pid == 0) {
		ChildFailure f = {};

		safe_close(fds[0]);
		/* traced by profctl, the command stops with SIGTRAP right after a successful exec */
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0) {
			f.step = 1;
			execvp(argv[0], argv);
		}
		f.error = errno;
		(void)!write(fds[1], &f, sizeof(f));
		_exit(127);
	}
	safe_close(fds[1]);

	do
		n = read(err_r, &failure, sizeof(failure));
	while (n < 0 && errno == EINTR);
	r = wait_status(pid, &status);
	if (r < 0)
		return r;
	if (n == sizeof(failure) || !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
		/* the child ran nothing, or exited: reap it */
		if (WIFSTOPPED(status))
			(void)kill(pid, SIGKILL);
		while (!WIFEXITED(status) && !WIFSIGNALED(status) && wait_status(pid, &status) >= 0)
			;
		if (ret_step)
			*ret_step = failure.step == 0 && n == sizeof(failure) ? "ptrace" : "exec";
		return n == sizeof(failure) && failure.error > 0 ? -failure.error : -ECHILD;
	}
	/* if profctl dies before releasing it, the command must not run unprofiled */
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_EXITKILL) < 0) {
		r = negative_errno();
		(void)kill(pid, SIGKILL);
		(void)wait_status(pid, &status);
		return r;
	}
	*ret = (HeldChild){ .pid = pid, .held = true };
	return 0;
}

int held_child_release(HeldChild *c)
{
	/* detaching with signal 0 drops the exec's SIGTRAP; the command starts at its first instruction */
	if (ptrace(PTRACE_DETACH, c->pid, NULL, NULL) < 0)
		return negative_errno();
	c->held = false;
	return 0;
}

int held_child_wait(HeldChild *c, int *ret_status)
{
	int status, r;

	r = wait_status(c->pid, &status);
	if (r < 0)
		return r;
	c->pid = 0;
	*ret_status = status;
	return 0;
}

void held_child_abort(HeldChild *c)
{
	int status;

	if (c->pid > 0) {
		(void)kill(c->pid, SIGKILL);
		(void)held_child_wait(c, &status);
	}
	c->held = false;
}

void held_child_describe_status(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "was killed by signal %s", sigabbrev_np(WTERMSIG(status)) ?: "?");
	else
		snprintf(buf, size, "ended with wait status 0x%x", (unsigned)status);
}
