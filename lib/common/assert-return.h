/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A programmer error at a public library entry point (NULL where an object is
 * required, a value out of its enum): the function returns 'r', as systemd's
 * sd-* libraries do, instead of crashing in the caller's process. Library code
 * never exits, so unlike assert() this never aborts.
 */
#define assert_return(expr, r)                    \
	do {                                      \
		if (__builtin_expect(!(expr), 0)) \
			return (r);               \
	} while (0)
