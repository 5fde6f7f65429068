/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static int max_level = LOG_INFO;

void log_set_max_level(int level)
{
	max_level = level;
}

_printf_(2, 0) static void log_write(int level, const char *format, va_list ap)
{
	char buf[2048];

	/* One write per line so lines from a crash-looping daemon never interleave. */
	vsnprintf(buf, sizeof(buf), format, ap);
	fprintf(stderr, "<%d>%s\n", level, buf);
}

void log_full(int level, const char *format, ...)
{
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, format);
	log_write(level, format, ap);
	va_end(ap);
}

int log_full_errno(int level, int error, const char *format, ...)
{
	va_list ap;

	if (level > max_level)
		return error;
	va_start(ap, format);
	log_write(level, format, ap);
	va_end(ap);
	return error;
}
