/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "profctl.h"

#define PROFD_BUS_NAME "org.profd.Profiler1"
#define PROFD_MANAGER_PATH "/org/profd/Profiler1"
#define PROFD_MANAGER_INTERFACE "org.profd.Profiler1.Manager"
#define PROFD_SESSION_INTERFACE "org.profd.Profiler1.Session"
#define PROFD_SESSION_PATH_PREFIX "/org/profd/Profiler1/session/"

/*
 * Connect to the bus ctx names and check that profd answers there. On failure
 * prints one line saying how to start profd or to use --local, and returns
 * a negative errno.
 */
int profctl_bus_open(const ProfctlContext *ctx, sd_bus **ret);

/* Call a Manager method; on failure prints "profctl: <what>: <error message>". */
int profctl_call_manager(sd_bus *bus, const char *what, const char *method, sd_bus_message **ret_reply,
			 const char *types, ...);

/* The object path of session id ("/org/profd/Profiler1/session/<id>"); -EINVAL for an unsafe id. */
int profctl_session_path(const char *id, char **ret);

/* Print "profctl: <what>: <bus error message>" and return the errno it maps to. */
int profctl_log_bus_error(const char *what, const sd_bus_error *error, int r);
