/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profd-unwinder: unwinds and names one caller's samples for profd, in a
 * sandbox of its own (unwinder-sandbox.h). profd starts it with every
 * capability dropped and NO_NEW_PRIVS set, its socket as descriptor 3 and
 * nothing else open; it installs its seccomp filter and Landlock domain
 * before it reads a byte, then serves (unwinder-serve.h). Whatever a hostile
 * file makes it do, it can only answer profd, which checks every answer.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "unwinder-sandbox.h"
#include "unwinder-serve.h"

#define UNWINDER_SOCKET_FD 3

/* Under AddressSanitizer: the leak check at exit needs ptrace and clone, which the filter denies. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

int main(int argc, char **argv)
{
	struct stat st;
	int landlock = 0, type = 0, r;
	socklen_t len = sizeof(type);

	if (argc != 1) {
		fprintf(stderr, "profd-unwinder takes no arguments; profd starts it\n");
		return 2;
	}
	/* started by profd or not at all: descriptor 3 must be its socket */
	if (fstat(UNWINDER_SOCKET_FD, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(UNWINDER_SOCKET_FD, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_SEQPACKET) {
		fprintf(stderr, "profd-unwinder: descriptor 3 is not profd's socket; profd starts it\n");
		return 2;
	}
	r = unwinder_sandbox(&landlock);
	if (r < 0) {
		fprintf(stderr, "profd-unwinder: cannot enter the sandbox: %s\n", strerror(-r));
		return 1;
	}
	r = unwinder_serve(UNWINDER_SOCKET_FD);
	if (r < 0) {
		fprintf(stderr, "profd-unwinder: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
