/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * export-fd3 ADDRESS SESSION_PATH FORMAT: call ExportToFd with this
 * process's fd 3, whatever it is (a file, a terminal, a socket), and wait
 * for the answer, as busctl would if it could pass descriptors. Exit 0 on
 * success; on a D-Bus error print "NAME: message" and exit 1.
 */
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-client.h"

int main(int argc, char **argv)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus *bus = NULL;
	int r;

	r = bus_client_open_args(argc, argv, 3, "export-fd3 ADDRESS SESSION_PATH FORMAT", &bus);
	if (r >= 0)
		r = sd_bus_call_method(bus, "org.profd.Profiler1", argv[2], "org.profd.Profiler1.Session",
				       "ExportToFd", &error, NULL, "sh", argv[3], 3);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", error.name ?: "error", error.message ?: strerror(-r));
		return 1;
	}
	return 0;
}
