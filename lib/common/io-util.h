/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"

/* A stdio stream over 'fd', which it takes: closed when there is no stream. */
static inline int fdopen_take(int fd, const char *mode, FILE **ret)
{
	FILE *f = fdopen(fd, mode);

	if (!f) {
		int r = negative_errno();

		safe_close(fd);
		return r;
	}
	*ret = f;
	return 0;
}

/* A stdio stream of its own over what 'fd' refers to (a close-on-exec duplicate above 2). */
static inline int fdopen_dup(int fd, const char *mode, FILE **ret)
{
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	return copy < 0 ? negative_errno() : fdopen_take(copy, mode, ret);
}

/* write() all of it, retrying on EINTR. */
static inline int write_all(int fd, const void *data, size_t size)
{
	const char *p = data;

	while (size > 0) {
		ssize_t n = write(fd, p, size);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

/*
 * A close-on-exec memfd named 'name' holding a copy of 'data', at its start,
 * sealed with 'seals' (F_SEAL_*; 0: none, and none possible): the descriptor,
 * or a negative errno.
 */
static inline int memfd_new_from(const char *name, const void *data, size_t size, unsigned seals)
{
	_cleanup_close_ int fd = memfd_create(name, MFD_CLOEXEC | (seals ? MFD_ALLOW_SEALING : 0));
	int r;

	if (fd < 0)
		return negative_errno();
	r = write_all(fd, data, size);
	if (r < 0)
		return r;
	if (lseek(fd, 0, SEEK_SET) < 0 || (seals && fcntl(fd, F_ADD_SEALS, seals) < 0))
		return negative_errno();
	return TAKE_FD(fd);
}
