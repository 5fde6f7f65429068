/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Signals addressed to one connection. sd-bus broadcasts signals and
 * PropertiesChanged, and on a bus that lets callers add match rules anyone
 * would then learn another user's session paths, states, run ids and errors
 * (DESIGN.md §8). A session's signals go only to the connection that started
 * it; a bus monitor (root) still sees them, others read properties they may see.
 */

#include <systemd/sd-bus.h>

/* Signal 'member' ('types' and the values after it, as sd_bus_message_append()) to 'destination'. */
int bus_signal_to(sd_bus *bus, const char *destination, const char *path, const char *interface,
		  const char *member, const char *types, ...);

/*
 * org.freedesktop.DBus.Properties.PropertiesChanged for the properties
 * 'names' (NULL-terminated) of 'interface' at 'path', their values read
 * through the getters of 'vtable' with 'userdata', sent to 'destination'.
 */
int bus_properties_changed_to(sd_bus *bus, const char *destination, const char *path,
			      const char *interface, const sd_bus_vtable *vtable, void *userdata,
			      const char *const *names);
