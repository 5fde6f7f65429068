/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit test of pidfd_check_alive() as the installed unit runs it: without
 * CAP_KILL, on another user's process (signal 0 would be refused there), then
 * after that process exited and after it was reaped.
 */
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "access.h"
#include "test-util.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

#define NOBODY 65534

/* Clear 'cap' from the effective set (it stays permitted, as in the unit's bounding set). */
static int drop_effective(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}

int main(void)
{
	int hold[2], ready[2], pidfd, status;
	pid_t child;
	char c;

	if (geteuid() != 0) {
		fprintf(stderr, "test-liveness needs root (it starts a process as uid %d)\n", NOBODY);
		return EXIT_FAILURE;
	}
	if (pipe(hold) < 0 || pipe(ready) < 0)
		return EXIT_FAILURE;
	child = fork();
	if (child < 0)
		return EXIT_FAILURE;
	if (child == 0) {
		close(hold[1]);
		close(ready[0]);
		if (setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(2);
		close(ready[1]); /* runs as NOBODY now */
		/* lives until the parent closes its end */
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(hold[0]);
	close(ready[1]);
	while (read(ready[0], &c, 1) < 0 && errno == EINTR)
		;
	pidfd = pidfd_open_pid(child);
	CHECK(pidfd >= 0, "pidfd_open_pid(%d): %s", (int)child, strerror(-pidfd));
	CHECK(drop_effective(CAP_KILL) == 0, "cannot drop CAP_KILL");

	/* the setup reproduces the unit: signal 0 to this process is refused */
	CHECK(syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 && errno == EPERM,
	      "signal 0 to uid %d's process without CAP_KILL was not refused", NOBODY);

	CHECK(pidfd_check_alive(pidfd) == 0, "a living process of another uid reads as gone");

	close(hold[1]);
	/* exited, not yet reaped: the pidfd polls readable once the zombie is there */
	for (int i = 0; i < 10000 && pidfd_check_alive(pidfd) == 0; i++)
		usleep(1000);
	CHECK(pidfd_check_alive(pidfd) == -ESRCH, "an exited (zombie) process reads as alive");
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child did not exit cleanly (status 0x%x)", status);
	CHECK(pidfd_check_alive(pidfd) == -ESRCH, "a reaped process reads as alive");
	close(pidfd);
	return test_result();
}
