/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-address.h"

#include "cleanup.h"

int bus_open_address(const char *address, bool client, sd_bus **ret)
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
