/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * Replace 'dir'/'name' with 'data' so that a crash leaves either the old or
 * the new content, never a mix: write a temporary file, fsync it, rename it
 * over the name, fsync the directory.
 */
int write_file_atomic(const char *dir, const char *name, const void *data, size_t size);
/* The same with the content written by 'fill' into the temporary file's fd. */
typedef int (*AtomicFillFn)(int fd, void *userdata);
int write_file_atomic_fn(const char *dir, const char *name, AtomicFillFn fill, void *userdata);

/* write() all of it, retrying on EINTR. */
int write_all(int fd, const void *data, size_t size);

/* Read a whole file (at most 'max' bytes, else -EFBIG); NUL-terminated. */
int read_file_full(const char *path, size_t max, char **ret_data, size_t *ret_size);

/* Move a file that cannot be loaded out of the way, as PATH.corrupt. */
int set_aside_corrupt(const char *path);
