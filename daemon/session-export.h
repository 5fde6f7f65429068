/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A finished session's exports live as files in its directory, one per
 * format, written once on a worker thread; Export and ExportToFd then only
 * copy a file, also on a worker thread, so a large profile or a slow reader
 * never holds up the bus.
 */

#include <systemd/sd-bus.h>

#include "export.h"
#include "session.h"

/* WorkFn: write every export and the run record of a session in 'resolving'. */
void session_write_exports(void *session);

/* Delete the session's directory and files. */
void session_remove_files(Session *s);

/*
 * Answer 'm' with the export file of 'format' of session 's': as "ay" bounded
 * by the configured size (fd < 0), or copied into fd (taken over).
 */
int session_export_reply(Session *s, sd_bus_message *m, ExportFormat format, int fd,
			 sd_bus_error *error);
