/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include "cleanup.h"

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
