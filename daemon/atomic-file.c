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

int open_private_dir(int dir_fd, const char *name, mode_t mode)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (mode != 0 && mkdirat(dir_fd, name, mode) < 0 && errno != EEXIST)
		return negative_errno();
	fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOTDIR && fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return -ELOOP; /* O_DIRECTORY answers a link with ENOTDIR: say what it is */
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	return TAKE_FD(fd);
}

/* A new temporary file: a leftover of a crash (or anything planted) under its name is removed. */
static int create_temp(int dir_fd, const char *tmp)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : negative_errno();
		if (unlinkat(dir_fd, tmp, 0) < 0 && errno != ENOENT)
			return negative_errno();
	}
	return -EEXIST;
}

int write_file_atomic_deferred_fn(int dir_fd, const char *name, AtomicFillFn fill, void *userdata)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (asprintf(&tmp, ".#%s.tmp", name) < 0)
		return -ENOMEM;
	fd = create_temp(dir_fd, tmp);
	if (fd < 0)
		return fd;
	r = fill(fd, userdata);
	if (r == 0 && fsync(fd) < 0)
		r = negative_errno();
	if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = negative_errno();
	if (r < 0)
		unlinkat(dir_fd, tmp, 0);
	return r;
}

int write_file_atomic_fn(int dir_fd, const char *name, AtomicFillFn fill, void *userdata)
{
	int r = write_file_atomic_deferred_fn(dir_fd, name, fill, userdata);

	if (r < 0)
		return r;
	/* the rename itself must reach the disk too */
	if (fsync(dir_fd) < 0)
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

int write_file_atomic(int dir_fd, const char *name, const void *data, size_t size)
{
	Buffer b = { data, size };

	return write_file_atomic_fn(dir_fd, name, fill_buffer, &b);
}

int write_file_atomic_deferred(int dir_fd, const char *name, const void *data, size_t size)
{
	Buffer b = { data, size };

	return write_file_atomic_deferred_fn(dir_fd, name, fill_buffer, &b);
}

int unlink_durable(int dir_fd, const char *name, int flags)
{
	if (unlinkat(dir_fd, name, flags) < 0 && errno != ENOENT)
		return negative_errno();
	if (fsync(dir_fd) < 0)
		return negative_errno();
	return 0;
}

int open_regular_at(int dir_fd, const char *name)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/* O_NONBLOCK: a FIFO planted under the name must not hang the open */
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EBADF;
	if (fcntl(fd, F_SETFL, 0) < 0)
		return negative_errno();
	return TAKE_FD(fd);
}

int read_fd_full(int fd, size_t max, char **ret_data, size_t *ret_size)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t size = 0;

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

int read_file_at(int dir_fd, const char *name, size_t max, char **ret_data, size_t *ret_size)
{
	_cleanup_close_ int fd = open_regular_at(dir_fd, name);

	if (fd < 0)
		return fd;
	return read_fd_full(fd, max, ret_data, ret_size);
}

int set_aside_corrupt(int dir_fd, const char *name)
{
	_cleanup_free_ char *to = NULL;

	if (asprintf(&to, "%s.corrupt", name) < 0)
		return -ENOMEM;
	if (renameat(dir_fd, name, dir_fd, to) < 0)
		return negative_errno();
	return 0;
}
