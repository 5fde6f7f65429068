/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Export and ExportToFd of a finished session. metrics and record were
 * written when the session finished; a profile format (folded, pprof,
 * firefox, speedscope, svg) is made from the session's compact profile file
 * the first time it is asked for, on an export thread, and kept beside it.
 * The file is then served by export-stream.c, so no client holds up another.
 */

#include <systemd/sd-bus.h>

#include "export.h"
#include "manager.h"

typedef struct ExportRequest {
	int dir_fd;                /* the session's directory (or a negative errno); taken over */
	const char *session_id;    /* for messages */
	const char *session_error; /* why it has no profile, if it failed; NULL otherwise */
	ExportFormat format;
	int out_fd;                /* ExportToFd's descriptor, taken over; -1 for Export */
} ExportRequest;

/*
 * Answer 'msg' with the export 'req' names. Returns 1 (the reply comes later)
 * or a negative errno with 'error' set. The descriptors are taken either way.
 */
int session_export_reply(Manager *m, sd_bus_message *msg, const ExportRequest *req,
			 sd_bus_error *error);
