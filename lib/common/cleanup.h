/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Scope-bound cleanup, in the style of systemd's macro.h: a variable declared
 * _cleanup_free_ is freed when it goes out of scope, so functions keep one exit
 * path without goto ladders. Destructors used here must accept NULL (or -1 for
 * fds), and TAKE_PTR()/TAKE_FD() hand ownership out of a scope.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Return the pointer and clear the variable, so its cleanup does nothing. */
#define TAKE_PTR(p)                        \
	({                                 \
		__typeof__(p) _ptr_ = (p); \
		(p) = NULL;                \
		_ptr_;                     \
	})

#define TAKE_FD(fd)              \
	({                       \
		int _fd_ = (fd); \
		(fd) = -1;       \
		_fd_;            \
	})

/* Define name##p(type *p) that calls func(*p) when *p is set. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
	static inline void func##p(type *p)     \
	{                                       \
		if (*p)                         \
			func(*p);               \
	}

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

static inline void closep(int *fd)
{
	safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose);
#define _cleanup_fclose_ _cleanup_(fclosep)

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

/* errno as a negative return value, never 0 even when errno was not set. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}
