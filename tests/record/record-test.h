/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Fixture helpers shared by the record tests. */

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

/* Read dir/sub/name+suffix whole (NUL terminated); aborts the test when missing. */
static inline char *read_fixture(const char *dir, const char *sub, const char *name,
				 const char *suffix, size_t *ret_len)
{
	char path[4096];
	char *buf = NULL;
	size_t len = 0, size = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s%s", dir, sub, name, suffix);
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "FAIL cannot open fixture '%s': %m\n", path);
		exit(1);
	}
	for (;;) {
		if (len + 4096 + 1 > size) {
			size = (len + 4096 + 1) * 2;
			buf = realloc(buf, size);
			if (!buf)
				abort();
		}
		size_t n = fread(buf + len, 1, size - len - 1, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	buf[len] = '\0';
	if (ret_len)
		*ret_len = len;
	return buf;
}

/* Report the first differing line of two texts. */
static inline void check_same_text(const char *name, const char *what, const char *expected,
				   const char *got)
{
	size_t line = 1;
	const char *e = expected, *g = got;

	if (strcmp(expected, got) == 0)
		return;
	while (*e && *e == *g) {
		if (*e == '\n')
			line++;
		e++, g++;
	}
	while (e > expected && e[-1] != '\n')
		e--, g--;
	fprintf(stderr, "FAIL %s: %s differs at line %zu\n  expected: %.*s\n  got:      %.*s\n",
		name, what, line, (int) strcspn(e, "\n"), e, (int) strcspn(g, "\n"), g);
	test_failures++;
}
