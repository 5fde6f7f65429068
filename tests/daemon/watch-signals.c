/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch-signals ADDRESS: subscribe to every signal on the bus, as any caller
 * may with a match rule (no eavesdropping), and print one line per signal:
 * "MEMBER PATH". Prints "ready" once subscribed; runs until killed.
 */
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "bus-client.h"

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	printf("%s %s\n", sd_bus_message_get_member(m), sd_bus_message_get_path(m));
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	sd_bus *bus = NULL;
	int r;

	r = bus_client_open_args(argc, argv, 1, "watch-signals ADDRESS", &bus);
	if (r >= 0)
		r = sd_bus_add_match(bus, NULL, "type='signal'", on_signal, NULL);
	if (r < 0) {
		fprintf(stderr, "cannot watch the bus: %s\n", strerror(-r));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		r = sd_bus_process(bus, NULL);
		if (r < 0)
			return 1;
		if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
			return 1;
	}
}
