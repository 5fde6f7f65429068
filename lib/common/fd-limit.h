/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <sys/resource.h>

/*
 * Raise the soft limit of open files to the hard limit: a session needs one
 * perf event per thread and CPU, and the usual soft limit of 1024 is too low
 * for big targets. 0 or -errno (the limit unchanged).
 */
static inline int raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur == rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}
