/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A session's properties on disk: "key=value" lines in <dir>/session, made
 * from the property table (session-properties.h), rewritten atomically at
 * start and when the session finishes. Values never hold a newline.
 */

#include "session-properties.h"

/* The properties file in a session's directory; the profile and exports sit beside it. */
#define SESSION_FILE "session"

/* Write 'p' as the properties file of the directory 'dir_fd'. */
int session_file_write(int dir_fd, const SessionProperties *p);

/*
 * Read the properties file of 'dir_fd' into 'ret' (done() it after), which
 * must name the session 'id'. Keys of a newer profd are skipped. Errors say
 * what was wrong in *ret_reason.
 */
int session_file_read(int dir_fd, const char *id, SessionProperties *ret, const char **ret_reason);
