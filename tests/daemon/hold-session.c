/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hold-session ADDRESS PID DURATION_USEC: start a session with the option
 * stop_on_disconnect, print its object path, then stay connected until
 * killed: a client that vanishes mid-session (busctl cannot stay connected).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-client.h"

int main(int argc, char **argv)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *id, *path;
	sd_bus *bus = NULL;
	int r;

	r = bus_client_open_args(argc, argv, 3, "hold-session ADDRESS PID DURATION_USEC", &bus);
	if (r >= 0)
		r = sd_bus_call_method(bus, "org.profd.Profiler1", "/org/profd/Profiler1",
				       "org.profd.Profiler1.Manager", "StartSession", &error, &reply,
				       "uuta{sv}", (uint32_t)atoi(argv[2]), 99U,
				       (uint64_t)strtoull(argv[3], NULL, 10), 1, "stop_on_disconnect",
				       "b", 1);
	if (r >= 0)
		r = sd_bus_message_read(reply, "so", &id, &path);
	if (r < 0) {
		fprintf(stderr, "StartSession failed: %s\n", error.message ?: strerror(-r));
		return 1;
	}
	printf("%s\n", path);
	fflush(stdout);
	for (;;)
		pause();
}
