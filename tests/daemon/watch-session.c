/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch-session ADDRESS PID DURATION_USEC: start a session, print its path,
 * then every signal of it this connection receives ("PropertiesChanged STATE"
 * for those that carry State, "Finished STATE"), until Finished (exit 0) or
 * 60 s (exit 1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "bus-client.h"
#include "time-util.h"

#define SESSION_PREFIX "/org/profd/Profiler1/session"

static int print_state(sd_bus_message *m)
{
	const char *interface, *name, *state;
	int r;

	r = sd_bus_message_read(m, "s", &interface);
	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		r = sd_bus_message_read(m, "s", &name);
		if (r >= 0 && strcmp(name, "State") == 0) {
			r = sd_bus_message_read(m, "v", "s", &state);
			if (r >= 0)
				printf("PropertiesChanged %s\n", state);
		} else if (r >= 0)
			r = sd_bus_message_skip(m, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	return r;
}

/* Print the session's signals received until Finished. */
static int listen(sd_bus *bus, uint64_t until)
{
	int r;

	while (clock_micros(CLOCK_MONOTONIC) < until) {
		sd_bus_message *m = NULL;
		uint8_t type;

		r = sd_bus_process(bus, &m);
		if (r < 0)
			return r;
		if (r == 0) {
			sd_bus_wait(bus, until - clock_micros(CLOCK_MONOTONIC));
			continue;
		}
		/* the bus driver's own signals to us (NameAcquired) are not the session's */
		if (!m || sd_bus_message_get_type(m, &type) < 0 || type != SD_BUS_MESSAGE_SIGNAL ||
		    strncmp(sd_bus_message_get_path(m) ?: "", SESSION_PREFIX, strlen(SESSION_PREFIX)) != 0) {
			sd_bus_message_unref(m);
			continue;
		}
		if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged"))
			print_state(m);
		else if (sd_bus_message_is_signal(m, "org.profd.Profiler1.Session", "Finished")) {
			const char *state;

			if (sd_bus_message_read(m, "s", &state) >= 0)
				printf("Finished %s\n", state);
			sd_bus_message_unref(m);
			return 0;
		}
		fflush(stdout);
		sd_bus_message_unref(m);
	}
	return -ETIMEDOUT;
}

int main(int argc, char **argv)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *id, *path = NULL;
	sd_bus *bus = NULL;
	int r;

	r = bus_client_open_args(argc, argv, 3, "watch-session ADDRESS PID DURATION_USEC", &bus);
	if (r >= 0)
		r = sd_bus_add_match(bus, NULL,
				     "type='signal',path_namespace='" SESSION_PREFIX "'", NULL, NULL);
	if (r >= 0)
		r = sd_bus_call_method(bus, "org.profd.Profiler1", "/org/profd/Profiler1",
				       "org.profd.Profiler1.Manager", "StartSession", &error, &reply,
				       "uuta{sv}", (uint32_t)atoi(argv[2]), 499U,
				       (uint64_t)strtoull(argv[3], NULL, 10), 0);
	if (r >= 0)
		r = sd_bus_message_read(reply, "so", &id, &path);
	if (r >= 0) {
		printf("%s\n", path);
		fflush(stdout);
		r = listen(bus, clock_micros(CLOCK_MONOTONIC) + 60000000);
	}
	if (r < 0)
		fprintf(stderr, "watch-session: %s\n", error.message ?: strerror(-r));
	sd_bus_error_free(&error);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(bus);
	return r < 0 ? 1 : 0;
}
