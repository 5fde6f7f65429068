/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Control characters in text someone else chose (a run id, a process name):
 * what counts as one, and a form that is safe on a terminal. C0 (below
 * 0x20), DEL and C1 (U+0080..U+009F, two bytes in UTF-8) all count: some
 * terminals act on C1 as they do on ESC sequences.
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of the control character at 's' (1 or 2), or 0 when there is none there. */
static inline size_t control_char_at(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (p[0] < 0x20 || p[0] == 0x7f)
		return p[0] ? 1 : 0;
	if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	return 0;
}

/* Write 's' with control characters as \xNN; newlines and tabs kept when 'keep_lines'. */
static inline void fputs_escaped(const char *s, bool keep_lines, FILE *f)
{
	while (*s) {
		size_t n = control_char_at(s);

		if (n == 0 || (keep_lines && (*s == '\n' || *s == '\t'))) {
			fputc(*s++, f);
			continue;
		}
		for (size_t i = 0; i < n; i++)
			fprintf(f, "\\x%02x", (unsigned char)*s++);
	}
}

/* A copy of 's' with every control character as \xNN (NULL when out of memory). */
static inline char *strdup_escaped(const char *s)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	fputs_escaped(s, false, f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
