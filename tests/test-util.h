/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Checks shared by the C tests: a failed CHECK reports where, the condition and
 * what differed, then the test goes on so one run shows every failure.
 */

#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			test_failures++;                                                   \
		}                                                                          \
	} while (0)

/* The exit status of a test: failure when any check failed, with their count. */
static inline int test_result(void)
{
	if (test_failures > 0)
		fprintf(stderr, "%d check(s) failed\n", test_failures);
	return test_failures > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
