/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging of the daemon: one line per message on stderr with a "<N>" syslog
 * level prefix, which journald (and systemd's stderr handling) turns into the
 * message priority.
 */

#include <syslog.h>

#include "cleanup.h"

/* Messages above this level are dropped; LOG_INFO unless raised by --debug. */
void log_set_max_level(int level);
_printf_(2, 3) void log_full(int level, const char *format, ...);
/* Log and return 'error' (negative errno) so callers can 'return log_error_errno(r, ...)'. */
_printf_(3, 4) int log_full_errno(int level, int error, const char *format, ...);

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, (e), __VA_ARGS__)
