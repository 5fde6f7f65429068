/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Files of the state directory, always named relative to a directory fd and
 * never through a symbolic link: whoever could plant a link there must not
 * make root write, read or delete anything else (DESIGN.md §8).
 */

#include <dirent.h>
#include <stddef.h>
#include <sys/types.h>

#include "dir-stream.h"
#include "io-util.h"

/*
 * Open 'name' under 'dir_fd' (AT_FDCWD: a path) as a directory, creating it
 * with 'mode' when absent (mode 0: never create). Refused: a symbolic link
 * (-ELOOP), not a directory (-ENOTDIR), not owned by our euid or writable by
 * group or others (-EPERM; the others could swap its entries).
 */
int open_private_dir(int dir_fd, const char *name, mode_t mode);

/*
 * Replace 'name' in 'dir_fd' with 'data' so that a crash leaves either the
 * old or the new content, never a mix: a new temporary file (O_EXCL, so a
 * planted link is never followed), fsync, rename over the name, fsync of
 * the directory.
 */
int write_file_atomic(int dir_fd, const char *name, const void *data, size_t size);
/* The same with the content written by 'fill' into the temporary file's fd. */
typedef int (*AtomicFillFn)(int fd, void *userdata);
int write_file_atomic_fn(int dir_fd, const char *name, AtomicFillFn fill, void *userdata);
/*
 * The same without the directory's fsync: the content is on disk, the rename
 * only once the caller fsyncs 'dir_fd' — one fsync for several files, which
 * must come before anything that says they are there.
 */
int write_file_atomic_deferred(int dir_fd, const char *name, const void *data, size_t size);
int write_file_atomic_deferred_fn(int dir_fd, const char *name, AtomicFillFn fill, void *userdata);

/* Remove 'name' from 'dir_fd' (flags as unlinkat) and make that durable; a missing name is fine. */
int unlink_durable(int dir_fd, const char *name, int flags);


/* Open the regular file 'name' in 'dir_fd' for reading; a link or anything but a file is refused. */
int open_regular_at(int dir_fd, const char *name);
/* Read all of 'fd' (at most 'max' bytes, else -EFBIG); NUL-terminated. */
int read_fd_full(int fd, size_t max, char **ret_data, size_t *ret_size);
/* open_regular_at() + read_fd_full(). */
int read_file_at(int dir_fd, const char *name, size_t max, char **ret_data, size_t *ret_size);

/* Move an entry that cannot be loaded out of the way, as NAME.corrupt. */
int set_aside_corrupt(int dir_fd, const char *name);
