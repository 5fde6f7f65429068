/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hung systemd: takes the name org.freedesktop.systemd1 on the bus at
 * ADDRESS, prints "ready", and never reads a call again.
 * Usage: hung-systemd ADDRESS
 */
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sd_bus *bus = NULL;
	int r;

	if (argc != 2) {
		fprintf(stderr, "Usage: hung-systemd ADDRESS\n");
		return 2;
	}
	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, argv[1]);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r >= 0)
		r = sd_bus_request_name(bus, "org.freedesktop.systemd1", 0);
	if (r < 0) {
		fprintf(stderr, "cannot take org.freedesktop.systemd1: %s\n", strerror(-r));
		return 1;
	}
	puts("ready");
	fflush(stdout);
	for (;;)
		pause();
}
