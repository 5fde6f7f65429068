/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * call-until-gone ADDRESS RUN_ID: call profd as fast as it answers (the
 * Version property, ListRuns, GetRun RUN_ID in turn) until its bus name has
 * no owner, to catch a stopping profd leaving a call unanswered. Prints
 * "ready" after the first answer, then at the end "answered N refused M"
 * (refused: NoServer, what a profd on its way out answers) and exits 0 once
 * the bus says nobody owns the name; any other failure of a call (no reply,
 * the caller's connection lost, a timeout) is printed and exits 1.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bus-client.h"
#include "cleanup.h"

#define DEST "org.profd.Profiler1"
#define PATH "/org/profd/Profiler1"
#define MANAGER "org.profd.Profiler1.Manager"

static int call(sd_bus *bus, unsigned n, const char *run_id, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

	switch (n % 3) {
	case 0:
		return sd_bus_call_method(bus, DEST, PATH, "org.freedesktop.DBus.Properties", "Get",
					  error, &reply, "ss", MANAGER, "Version");
	case 1:
		return sd_bus_call_method(bus, DEST, PATH, MANAGER, "ListRuns", error, &reply, NULL);
	default:
		return sd_bus_call_method(bus, DEST, PATH, MANAGER, "GetRun", error, &reply, "s",
					  run_id);
	}
}

int main(int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	unsigned long answered = 0, refused = 0;
	int r;

	r = bus_client_open_args(argc, argv, 2, "call-until-gone ADDRESS RUN_ID", &bus);
	if (r < 0) {
		fprintf(stderr, "call-until-gone: cannot connect to '%s': %s\n", argv[1], strerror(-r));
		return 1;
	}
	for (unsigned n = 0;; n++) {
		_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

		r = call(bus, n, argv[2], &error);
		if (r >= 0) {
			if (answered++ == 0) {
				printf("ready\n");
				fflush(stdout);
			}
			continue;
		}
		if (sd_bus_error_has_names(&error, SD_BUS_ERROR_SERVICE_UNKNOWN,
					   SD_BUS_ERROR_NAME_HAS_NO_OWNER))
			break;
		if (sd_bus_error_has_name(&error, SD_BUS_ERROR_NO_SERVER)) {
			refused++;
			continue;
		}
		printf("dropped: call %u after %lu answers: %s: %s\n", n, answered,
		       error.name ?: "(no error name)", error.message ?: strerror(-r));
		return 1;
	}
	printf("answered %lu refused %lu\n", answered, refused);
	return 0;
}
