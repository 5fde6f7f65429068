/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "cleanup.h"

int write_all(int fd, const void *data, size_t size)
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

int write_file_atomic_fn(const char *dir, const char *name, AtomicFillFn fill, void *userdata)
{
	_cleanup_free_ char *path = NULL, *tmp = NULL;
	_cleanup_close_ int fd = -1, dfd = -1;
	int r;

	if (asprintf(&path, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s/.#%s.tmp", dir, name) < 0)
		return -ENOMEM;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return negative_errno();
	r = fill(fd, userdata);
	if (r == 0 && fsync(fd) < 0)
		r = negative_errno();
	if (r == 0 && rename(tmp, path) < 0)
		r = negative_errno();
	if (r < 0) {
		unlink(tmp);
		return r;
	}

	/* the rename itself must reach the disk too */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0)
		return negative_errno();
	return 0;
}

typedef struct Buffer {
	const void *data;
	size_t size;
} Buffer;

static int fill_buffer(int fd, void *userdata)
{
	const Buffer *b = userdata;

	return write_all(fd, b->data, b->size);
}

int write_file_atomic(const char *dir, const char *name, const void *data, size_t size)
{
	Buffer b = { data, size };

	return write_file_atomic_fn(dir, name, fill_buffer, &b);
}

int read_file_full(const char *path, size_t max, char **ret_data, size_t *ret_size)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t size = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (size < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + size, (size_t)st.st_size - size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (n == 0)
			break;
		size += (size_t)n;
	}
	buf[size] = '\0';
	*ret_data = TAKE_PTR(buf);
	*ret_size = size;
	return 0;
}

int set_aside_corrupt(const char *path)
{
	_cleanup_free_ char *to = NULL;

	if (asprintf(&to, "%s.corrupt", path) < 0)
		return -ENOMEM;
	if (rename(path, to) < 0)
		return negative_errno();
	return 0;
}
