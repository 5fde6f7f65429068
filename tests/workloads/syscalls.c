/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-syscalls [SECONDS]: most time is spent in the kernel, writing to /dev/null. */
#include <fcntl.h>
#include <unistd.h>

#include "spin.h"

static __attribute__((noinline)) void write_null(int fd, uint64_t until)
{
	static char buf[65536];

	while (workload_now_ns() < until)
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
}

int main(int argc, char **argv)
{
	double seconds = workload_seconds(argc, argv, 1, 3.0);
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return 1;
	write_null(fd, workload_now_ns() + (uint64_t)(seconds * 1e9));
	close(fd);
	return 0;
}
