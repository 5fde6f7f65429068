/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Connecting to a bus by its address (needs libsystemd, unlike the rest of lib/common). */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "cleanup.h"

/*
 * Connect to the bus at 'address' ("unix:path=..."): as a client of a bus
 * broker (Hello, names) with 'client', else as a peer (systemd's private
 * socket). File descriptors may pass: sd-bus negotiates them by default.
 */
static inline int bus_open_address(const char *address, bool client, sd_bus **ret)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	int r;

	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, address);
	if (r >= 0 && client)
		r = sd_bus_set_bus_client(bus, true);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(bus);
	return 0;
}
