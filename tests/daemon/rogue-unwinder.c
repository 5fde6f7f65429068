/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rogue-unwinder: a test program that stands where profd looks for
 * profd-unwinder and runs the real one (profd-unwinder.real beside it) behind
 * itself, passing every message both ways, but the RESULT of a session of uid
 * 65534 reaches profd with a stack-quality report that cannot be true (more
 * samples than any session is given): what a compromised unwinder could send.
 */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unwinder-protocol.h"

#define PROFD_FD 3
#define HOSTILE_OWNER 65534U
#define SESSIONS_MAX 256

static struct {
	uint64_t session;
	uint32_t owner;
} sessions[SESSIONS_MAX];
static size_t n_sessions;

static uint32_t owner_of(uint64_t session)
{
	for (size_t i = 0; i < n_sessions; i++)
		if (sessions[i].session == session)
			return sessions[i].owner;
	return 0;
}

/* A report of the right shape that claims a trillion samples. */
static int hostile_report(void)
{
	static const char report[] =
	    "{\"samples\":1000000000000,\"with_unnamed\":0,\"unnamed_leaf\":0,"
	    "\"ended_early\":0,\"continued\":0,\"executable\":null,\"modules\":[]}";
	int fd = memfd_create("rogue-report", MFD_CLOEXEC);

	if (fd < 0 || write(fd, report, sizeof(report) - 1) != (ssize_t)(sizeof(report) - 1))
		return -1;
	return fd;
}

/* Pass one message from 'from' to 'to'; what profd says is looked at, what goes to it changed. */
static int relay(int from, int to, bool to_profd)
{
	union {
		uint32_t type;
		UnwinderSessionStart start;
		UnwinderStats stats;
		uint8_t bytes[UNWINDER_MESSAGE_MAX];
	} m;
	int fds[UNWINDER_FDS_MAX], r;
	ssize_t n = unwinder_recv(from, &m, 0, fds);

	if (n <= 0)
		return -1;
	if (!to_profd && m.type == UNWINDER_SESSION_START && (size_t)n == sizeof(m.start) &&
	    n_sessions < SESSIONS_MAX) {
		sessions[n_sessions].session = m.start.session;
		sessions[n_sessions++].owner = m.start.owner;
	}
	if (to_profd && m.type == UNWINDER_RESULT && (size_t)n == sizeof(m.stats) && fds[1] >= 0 &&
	    owner_of(m.stats.session) == HOSTILE_OWNER) {
		close(fds[1]);
		fds[1] = hostile_report();
	}
	r = unwinder_send(to, &m, (size_t)n, fds, (fds[0] >= 0) + (fds[1] >= 0));
	for (int i = 0; i < UNWINDER_FDS_MAX; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return r;
}

int main(void)
{
	char self[PATH_MAX], real[PATH_MAX + 8];
	char *const argv[] = { (char *)"profd-unwinder", NULL };
	char *const envp[] = { NULL };
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int sv[2];
	pid_t pid;

	if (len <= 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return 1;
	self[len] = '\0';
	snprintf(real, sizeof(real), "%s.real", self);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		/* the real unwinder, on the other end of our pair as its descriptor 3 */
		if (dup2(sv[1], PROFD_FD) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
			_exit(127);
		(void)syscall(SYS_close_range, PROFD_FD + 1, ~0U, 0);
		execve(real, argv, envp);
		_exit(127);
	}
	close(sv[1]);
	for (;;) {
		struct pollfd p[2] = { { .fd = PROFD_FD, .events = POLLIN },
				       { .fd = sv[0], .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (p[0].revents && relay(PROFD_FD, sv[0], false) < 0)
			return 0;
		if (p[1].revents && relay(sv[0], PROFD_FD, true) < 0)
			return 0;
	}
}
