/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "bus-errors.h"

const sd_bus_error_map profd_bus_error_map[] = {
	SD_BUS_ERROR_MAP(PROFD_ERROR_NO_SUCH_PROCESS, ESRCH),
	SD_BUS_ERROR_MAP(PROFD_ERROR_NO_SUCH_SESSION, ENXIO),
	SD_BUS_ERROR_MAP(PROFD_ERROR_NO_SUCH_RUN, ENOENT),
	SD_BUS_ERROR_MAP(PROFD_ERROR_INVALID_RECORD, EBADMSG),
	SD_BUS_ERROR_MAP(PROFD_ERROR_TOO_MANY_SESSIONS, EUSERS),
	SD_BUS_ERROR_MAP(PROFD_ERROR_NOT_READY, EBUSY),
	SD_BUS_ERROR_MAP(PROFD_ERROR_UNSUPPORTED, EOPNOTSUPP),
	SD_BUS_ERROR_MAP(PROFD_ERROR_RUN_IN_PROGRESS, EALREADY),
	SD_BUS_ERROR_MAP(PROFD_ERROR_RUN_ENDED, ESTALE),
	SD_BUS_ERROR_MAP_END
};

int bus_errors_register(void)
{
	int r = sd_bus_error_add_map(profd_bus_error_map);

	/* sd-bus returns 0 when the same map was added before */
	return r < 0 ? r : 0;
}
