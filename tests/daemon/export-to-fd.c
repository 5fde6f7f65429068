/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * export-to-fd ADDRESS SESSION_PATH FORMAT OUTFILE [STALL_SECONDS]: call
 * ExportToFd with the write end of a pipe and copy what arrives to OUTFILE
 * while the call is outstanding, as profctl does (busctl cannot pass file
 * descriptors). With STALL_SECONDS the pipe is shrunk to one page and left
 * unread that long first, or until SIGUSR1 comes: a slow reader. Exit 0 on
 * success; on a D-Bus error print "NAME: message" and exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-client.h"
#include "cleanup.h"

static int reply_error;
static int done;

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	const sd_bus_error *e = sd_bus_message_get_error(m);

	if (e) {
		fprintf(stderr, "%s: %s\n", e->name, e->message);
		reply_error = 1;
	}
	done = 1;
	return 0;
}

int main(int argc, char **argv)
{
	_cleanup_close_ int out = -1;
	sd_bus *bus = NULL;
	int pipefd[2], r;
	size_t total = 0;
	char buf[65536];

	sigset_t release;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: export-to-fd ADDRESS SESSION_PATH FORMAT OUTFILE [STALL_SECONDS]\n");
		return 2;
	}
	/* blocked from the start: a SIGUSR1 that comes early stays pending and ends the stall */
	sigemptyset(&release);
	sigaddset(&release, SIGUSR1);
	sigprocmask(SIG_BLOCK, &release, NULL);
	out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
		fprintf(stderr, "cannot open '%s': %s\n", argv[4], strerror(errno));
		return 1;
	}
	if (argc == 6 && fcntl(pipefd[0], F_SETPIPE_SZ, 4096) < 0) {
		fprintf(stderr, "cannot shrink the pipe: %s\n", strerror(errno));
		return 1;
	}
	r = bus_client_open(argv[1], &bus);
	if (r >= 0)
		r = sd_bus_call_method_async(bus, NULL, "org.profd.Profiler1", argv[2],
					     "org.profd.Profiler1.Session", "ExportToFd", on_reply,
					     NULL, "sh", argv[3], pipefd[1]);
	if (r < 0) {
		fprintf(stderr, "cannot call ExportToFd: %s\n", strerror(-r));
		return 1;
	}
	r = sd_bus_flush(bus);
	close(pipefd[1]); /* only profd's copy keeps the pipe open now */
	if (argc == 6)
		while (sigtimedwait(&release, NULL, &(struct timespec){ .tv_sec = atoi(argv[5]) }) < 0 &&
		       errno == EINTR)
			;

	for (;;) {
		ssize_t n = read(pipefd[0], buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (write(out, buf, (size_t)n) != n) {
			fprintf(stderr, "cannot write '%s': %s\n", argv[4], strerror(errno));
			return 1;
		}
		total += (size_t)n;
	}
	while (!done) {
		r = sd_bus_process(bus, NULL);
		if (r < 0) {
			fprintf(stderr, "bus failed: %s\n", strerror(-r));
			return 1;
		}
		if (r == 0)
			sd_bus_wait(bus, UINT64_MAX);
	}
	sd_bus_flush_close_unref(bus);
	close(pipefd[0]);
	if (!reply_error)
		fprintf(stderr, "export-to-fd: %zu bytes\n", total);
	return reply_error;
}
