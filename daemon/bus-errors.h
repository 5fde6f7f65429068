/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The domain errors of org.profd.Profiler1 (DESIGN.md §6) and their errno
 * mapping, shared by the daemon and its clients: after bus_errors_register()
 * sd_bus_error_get_errno() of a reply gives the errno listed here.
 */

#include <systemd/sd-bus.h>

#define PROFD_ERROR_PREFIX "org.profd.Profiler1.Error."
#define PROFD_ERROR_NO_SUCH_PROCESS PROFD_ERROR_PREFIX "NoSuchProcess"     /* ESRCH */
#define PROFD_ERROR_NO_SUCH_SESSION PROFD_ERROR_PREFIX "NoSuchSession"     /* ENXIO */
#define PROFD_ERROR_NO_SUCH_RUN PROFD_ERROR_PREFIX "NoSuchRun"             /* ENOENT */
#define PROFD_ERROR_INVALID_RECORD PROFD_ERROR_PREFIX "InvalidRecord"      /* EBADMSG */
#define PROFD_ERROR_TOO_MANY_SESSIONS PROFD_ERROR_PREFIX "TooManySessions" /* EUSERS */
#define PROFD_ERROR_NOT_READY PROFD_ERROR_PREFIX "NotReady"                /* EBUSY */
#define PROFD_ERROR_UNSUPPORTED PROFD_ERROR_PREFIX "Unsupported"           /* EOPNOTSUPP */
#define PROFD_ERROR_RUN_IN_PROGRESS PROFD_ERROR_PREFIX "RunInProgress"     /* EALREADY */
#define PROFD_ERROR_RUN_ENDED PROFD_ERROR_PREFIX "RunEnded"                /* ESTALE */

extern const sd_bus_error_map profd_bus_error_map[];

/* Make the map known to sd-bus; idempotent. */
int bus_errors_register(void);
