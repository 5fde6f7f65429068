/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>

/* A client connection to the test's private bus at 'address', file descriptors allowed. */
static inline int bus_client_open(const char *address, sd_bus **ret)
{
	sd_bus *bus = NULL;
	int r;

	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, address);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_negotiate_fds(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	*ret = bus;
	return 0;
}

/*
 * A tool's start: exactly 'n_args' arguments (else its usage, "NAME ARGS...", on stderr and
 * exit status 2), the first the address of the bus it connects to.
 */
static inline int bus_client_open_args(int argc, char **argv, int n_args, const char *usage,
				       sd_bus **ret)
{
	if (argc != n_args + 1) {
		fprintf(stderr, "usage: %s\n", usage);
		exit(2);
	}
	return bus_client_open(argv[1], ret);
}
