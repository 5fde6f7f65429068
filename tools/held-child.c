/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "held-child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

int held_child_spawn(char **argv, HeldChild *ret)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return negative_errno();
	pid = fork();
	if (pid < 0) {
		int r = negative_errno();

		safe_close(fds[0]);
		safe_close(fds[1]);
		return r;
	}
	if (pid == 0) {
		char c;

		safe_close(fds[1]);
		/* EOF without the release byte: the parent gave up, so never run the command */
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		safe_close(fds[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "profctl: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	safe_close(fds[0]);
	*ret = (HeldChild){ .pid = pid, .release_fd = fds[1] };
	return 0;
}

int held_child_release(HeldChild *c)
{
	ssize_t n;

	do
		n = write(c->release_fd, "x", 1);
	while (n < 0 && errno == EINTR);
	c->release_fd = safe_close(c->release_fd);
	return n == 1 ? 0 : -EPIPE;
}

int held_child_wait(HeldChild *c, int *ret_status)
{
	int status;

	while (waitpid(c->pid, &status, 0) < 0)
		if (errno != EINTR)
			return negative_errno();
	c->pid = 0;
	*ret_status = status;
	return 0;
}

void held_child_abort(HeldChild *c)
{
	int status;

	c->release_fd = safe_close(c->release_fd);
	if (c->pid > 0) {
		(void)kill(c->pid, SIGKILL);
		(void)held_child_wait(c, &status);
	}
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
