/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>

#include "cleanup.h"

/*
 * A directory stream over the directory 'dir_fd' refers to, on a descriptor
 * of its own (its read position is not dir_fd's); 'dir_fd' stays open.
 */
static inline int dir_fd_open_stream(int dir_fd, DIR **ret)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return negative_errno();
	d = fdopendir(fd);
	if (!d) {
		safe_close(fd);
		return negative_errno();
	}
	*ret = d;
	return 0;
}
