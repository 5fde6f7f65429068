/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-daemon ADDRESS PROFD_PID RECORD_JSON [RUNS] [CLIENTS]: the run store
 * of a profd on a private bus, through sd-bus as clients see it.
 *   - RSS of profd idle, then after SubmitRun of RUNS records (default 1000)
 *   - GetRun and ListRuns latency (round trip; median and p99 of many calls)
 *   - calls/s with CLIENTS (default 4) processes doing GetRun for 2 s each
 * Prints one "name value unit" line per figure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "test-util.h"

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static sd_bus *connect_bus(const char *address)
{
	sd_bus *bus = NULL;
	int r = sd_bus_new(&bus);

	if (r >= 0)
		r = sd_bus_set_address(bus, address);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		fprintf(stderr, "cannot connect to %s: %s\n", address, strerror(-r));
		exit(1);
	}
	return bus;
}

static int call(sd_bus *bus, const char *method, const char *types, const char *arg)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	if (types)
		r = sd_bus_call_method(bus, "org.profd.Profiler1", "/org/profd/Profiler1",
				       "org.profd.Profiler1.Manager", method, &error, &reply, types,
				       arg);
	else
		r = sd_bus_call_method(bus, "org.profd.Profiler1", "/org/profd/Profiler1",
				       "org.profd.Profiler1.Manager", method, &error, &reply, NULL);
	if (r < 0)
		fprintf(stderr, "%s failed: %s\n", method, error.message ?: strerror(-r));
	sd_bus_error_free(&error);
	return r;
}

/* The record with run id "bench-<i>" in place of the fixture's. */
static char *record_with_id(const char *json, const char *old_id, unsigned i)
{
	const char *p = strstr(json, old_id);
	char *out;

	if (!p || asprintf(&out, "%.*sbench-%06u%s", (int)(p - json), json, i,
			   p + strlen(old_id)) < 0)
		return NULL;
	return out;
}

/* Median and p99 of n timed calls, in microseconds. */
static void time_calls(sd_bus *bus, const char *name, const char *method, const char *types,
		       unsigned n, unsigned n_runs)
{
	uint64_t *t = calloc(n, sizeof(*t));
	char id[32];

	for (unsigned i = 0; i < n; i++) {
		uint64_t start;

		snprintf(id, sizeof(id), "bench-%06u", (i * 7919u) % n_runs);
		start = clock_nanos(CLOCK_MONOTONIC);
		if (call(bus, method, types, id) < 0)
			exit(1);
		t[i] = clock_nanos(CLOCK_MONOTONIC) - start;
	}
	qsort(t, n, sizeof(*t), compare_u64);
	printf("%s_median %.1f us\n", name, t[n / 2] / 1000.0);
	printf("%s_p99 %.1f us\n", name, t[n * 99 / 100] / 1000.0);
	free(t);
}

static uint64_t client_loop(const char *address, unsigned n_runs, uint64_t seconds)
{
	sd_bus *bus = connect_bus(address);
	uint64_t end = clock_nanos(CLOCK_MONOTONIC) + seconds * 1000000000ULL, calls = 0;
	char id[32];

	while (clock_nanos(CLOCK_MONOTONIC) < end) {
		snprintf(id, sizeof(id), "bench-%06u", (unsigned)(calls % n_runs));
		if (call(bus, "GetRun", "s", id) < 0)
			exit(1);
		calls++;
	}
	sd_bus_flush_close_unref(bus);
	return calls;
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *json = NULL;
	unsigned n_runs, n_clients;
	const char *old_id = "4242-1764460800000000000-0";
	uint64_t total = 0, start, elapsed;
	sd_bus *bus;
	int pipefd[2];
	size_t size = 0;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: bench-daemon ADDRESS PROFD_PID RECORD_JSON [RUNS] [CLIENTS]\n");
		return 2;
	}
	n_runs = argc > 4 ? (unsigned)atoi(argv[4]) : 1000;
	n_clients = argc > 5 ? (unsigned)atoi(argv[5]) : 4;
	f = fopen(argv[3], "re");
	if (!f || getdelim(&json, &size, '\0', f) < 0) {
		fprintf(stderr, "cannot read '%s'\n", argv[3]);
		return 1;
	}
	fclose(f);

	bus = connect_bus(argv[1]);
	printf("rss_idle %ld KiB\n", test_process_status_kib(atoi(argv[2]), "VmRSS"));

	start = clock_nanos(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < n_runs; i++) {
		_cleanup_free_ char *rec = record_with_id(json, old_id, i);

		if (!rec || call(bus, "SubmitRun", "s", rec) < 0)
			return 1;
	}
	elapsed = clock_nanos(CLOCK_MONOTONIC) - start;
	printf("submit_run_mean %.1f us\n", elapsed / 1000.0 / n_runs);
	printf("rss_%u_runs %ld KiB\n", n_runs, test_process_status_kib(atoi(argv[2]), "VmRSS"));

	time_calls(bus, "get_run", "GetRun", "s", 2000, n_runs);
	time_calls(bus, "list_runs", "ListRuns", NULL, 200, n_runs);

	if (pipe(pipefd) < 0)
		return 1;
	start = clock_nanos(CLOCK_MONOTONIC);
	for (unsigned c = 0; c < n_clients; c++)
		if (fork() == 0) {
			uint64_t calls = client_loop(argv[1], n_runs, 2);

			if (write(pipefd[1], &calls, sizeof(calls)) != sizeof(calls))
				_exit(1);
			_exit(0);
		}
	close(pipefd[1]);
	for (unsigned c = 0; c < n_clients; c++) {
		uint64_t calls;

		if (read(pipefd[0], &calls, sizeof(calls)) == sizeof(calls))
			total += calls;
		wait(NULL);
	}
	elapsed = clock_nanos(CLOCK_MONOTONIC) - start;
	printf("get_run_%u_clients %.0f calls/s\n", n_clients, total * 1e9 / elapsed);
	printf("rss_after %ld KiB\n", test_process_status_kib(atoi(argv[2]), "VmRSS"));
	sd_bus_flush_close_unref(bus);
	return 0;
}
