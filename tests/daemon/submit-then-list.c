/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * submit-then-list ADDRESS FILE...: on one connection, send a SubmitRun of
 * each FILE's record and then a ListRuns without waiting for any reply; print
 * the replies in the order they arrive ("submit N" or "list"), exit 1 if any
 * call failed. profd reads its connection in order, so a ListRuns answered
 * before the last SubmitRun shows records are parsed off the bus loop, with no
 * timing in the test: a loop that parsed them would answer in the order sent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "bus-client.h"
#include "cleanup.h"

#define MAX_FILES 16

typedef struct Pending {
	int index; /* -1: ListRuns */
	int *left;
	int *failed;
} Pending;

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	Pending *p = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(m);

	(void)ret_error;
	if (p->index < 0)
		printf("list");
	else
		printf("submit %d", p->index);
	if (e) {
		printf(" failed: %s: %s", e->name, e->message ?: "");
		(*p->failed)++;
	}
	printf("\n");
	(*p->left)--;
	return 0;
}

static char *read_all(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t size = 0;
	_cleanup_fclose_ FILE *out = NULL;
	char buf[65536];
	size_t n;

	if (!f)
		return NULL;
	out = open_memstream(&text, &size);
	if (!out)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, out);
	return fclose(TAKE_PTR(out)) == 0 ? text : (free(text), NULL);
}

int main(int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	Pending pending[MAX_FILES + 1];
	int n = argc - 2, left, failed = 0, r;

	if (argc < 3 || n > MAX_FILES) {
		fprintf(stderr, "usage: submit-then-list ADDRESS FILE... (at most %d)\n", MAX_FILES);
		return EXIT_FAILURE;
	}
	r = bus_client_open(argv[1], &bus);
	if (r < 0) {
		fprintf(stderr, "cannot connect to '%s': %s\n", argv[1], strerror(-r));
		return EXIT_FAILURE;
	}
	left = n + 1;
	for (int i = 0; i <= n; i++) {
		_cleanup_free_ char *record = NULL;

		pending[i] = (Pending){ .index = i < n ? i : -1, .left = &left, .failed = &failed };
		if (i < n) {
			record = read_all(argv[i + 2]);
			if (!record) {
				fprintf(stderr, "cannot read '%s': %m\n", argv[i + 2]);
				return EXIT_FAILURE;
			}
			r = sd_bus_call_method_async(bus, NULL, "org.profd.Profiler1", "/org/profd/Profiler1",
						     "org.profd.Profiler1.Manager", "SubmitRun", on_reply,
						     &pending[i], "s", record);
		} else
			r = sd_bus_call_method_async(bus, NULL, "org.profd.Profiler1", "/org/profd/Profiler1",
						     "org.profd.Profiler1.Manager", "ListRuns", on_reply,
						     &pending[i], "");
		if (r < 0) {
			fprintf(stderr, "cannot send call %d: %s\n", i, strerror(-r));
			return EXIT_FAILURE;
		}
	}
	while (left > 0) {
		r = sd_bus_process(bus, NULL);
		if (r < 0) {
			fprintf(stderr, "connection failed: %s\n", strerror(-r));
			return EXIT_FAILURE;
		}
		if (r == 0 && sd_bus_wait(bus, 120 * 1000000ULL) <= 0) {
			fprintf(stderr, "no reply within 120 s\n");
			return EXIT_FAILURE;
		}
	}
	fflush(stdout);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
