/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-unwinder-sandbox UNWINDER: profd-unwinder started as profd starts it
 * (unwinder-spawn.c) runs with no capability, NO_NEW_PRIVS and its own
 * seccomp filter, and from inside it opening a file it was not handed fails
 * (a file of root's and one it could read by its uid alike). Protocol
 * nonsense ends it without a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "test-util.h"
#include "unwinder-protocol.h"
#include "unwinder-spawn.h"

/* The value of "Key:" in /proc/PID/status, or "" */
static void status_field(pid_t pid, const char *key, char *ret, size_t size)
{
	char path[64], line[256];
	FILE *f;

	*ret = '\0';
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':') {
			snprintf(ret, size, "%s", line + strlen(key) + 1 + strspn(line + strlen(key) + 1, " \t"));
			ret[strcspn(ret, "\n")] = '\0';
		}
	fclose(f);
}

/* Ask the unwinder to open 'path' itself; what openat() gave it. */
static int probe(int sock, const char *path)
{
	UnwinderProbe m = { .type = UNWINDER_PROBE_OPEN };
	uint8_t buf[UNWINDER_MESSAGE_MAX];
	UnwinderProbeReply reply;
	int fds[UNWINDER_FDS_MAX];
	ssize_t n;

	snprintf(m.path, sizeof(m.path), "%s", path);
	if (unwinder_send(sock, &m, sizeof(m), NULL, 0) < 0)
		return 1;
	n = unwinder_recv(sock, buf, 0, fds);
	if (n != sizeof(reply))
		return 1;
	memcpy(&reply, buf, sizeof(reply));
	return reply.type == UNWINDER_PROBE_REPLY ? reply.error : 1;
}

static pid_t start(const char *unwinder, int *ret_sock, int *ret_pidfd)
{
	pid_t pid = 0;
	int r = unwinder_spawn(unwinder, 1ULL << 32, &pid, ret_pidfd, ret_sock);

	if (r < 0) {
		fprintf(stderr, "cannot start %s: %s\n", unwinder, strerror(-r));
		exit(EXIT_FAILURE);
	}
	return pid;
}

int main(int argc, char **argv)
{
	char value[128], mine[] = "/tmp/profd-sandbox-XXXXXX";
	int sock, pidfd, status, fd, r;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: test-unwinder-sandbox UNWINDER\n");
		return EXIT_FAILURE;
	}
	pid = start(argv[1], &sock, &pidfd);

	/* it installs its filter before reading anything: the probe's answer means it is in */
	r = probe(sock, "/etc/passwd");
	CHECK(r == -EPERM, "openat of /etc/passwd inside the unwinder gave %d, not -EPERM", r);
	fd = mkstemp(mine);
	CHECK(fd >= 0 && fchmod(fd, 0644) == 0, "cannot create %s", mine);
	safe_close(fd);
	r = probe(sock, mine);
	CHECK(r == -EPERM, "openat of a world-readable file inside the unwinder gave %d", r);
	unlink(mine);
	r = probe(sock, "/proc/self/status");
	CHECK(r == -EPERM, "openat of its own /proc file gave %d", r);

	status_field(pid, "CapEff", value, sizeof(value));
	CHECK(strcmp(value, "0000000000000000") == 0, "CapEff %s", value);
	status_field(pid, "CapPrm", value, sizeof(value));
	CHECK(strcmp(value, "0000000000000000") == 0, "CapPrm %s", value);
	status_field(pid, "NoNewPrivs", value, sizeof(value));
	CHECK(strcmp(value, "1") == 0, "NoNewPrivs %s", value);
	status_field(pid, "Seccomp", value, sizeof(value));
	CHECK(strcmp(value, "2") == 0, "Seccomp %s (2: filter mode)", value);

	/* nonsense from "profd" ends it cleanly: an error exit, not a signal */
	CHECK(write(sock, "\x07\0\0\0garbage", 11) == 11, "cannot write to the unwinder");
	CHECK(waitpid(pid, &status, 0) == pid, "cannot reap the unwinder");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x", status);
	safe_close(sock);
	safe_close(pidfd);

	/* and it refuses to run when not started by profd */
	r = system(argv[1]);
	CHECK(WIFEXITED(r) && WEXITSTATUS(r) == 2, "started by hand: status %#x", r);
	return test_result();
}
