/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

/*
 * Connect to the bus at 'address' ("unix:path=..."): as a client of a bus
 * broker (Hello, names) with 'client', else as a peer (systemd's private socket).
 */
int bus_open_address(const char *address, bool client, sd_bus **ret);
