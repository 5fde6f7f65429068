/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* profctl runs: the run records profd keeps, newest last. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "json-number.h"
#include "profctl-bus.h"
#include "profctl.h"
#include "table.h"


static void format_usec(uint64_t usec, char *buf, size_t size)
{
	time_t seconds = (time_t)(usec / 1000000);
	struct tm tm;

	if (usec == 0 || !localtime_r(&seconds, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, size, "-");
}

/* One page of ListRunsRange into the table and the array; *ret_n rows read, *ret_total runs in all. */
static int read_page(sd_bus_message *reply, Table *table, json_t *array, uint64_t *ret_n,
		     uint64_t *ret_total)
{
	const char *run_id, *status, *source, *workload;
	uint64_t wall_ns, finished_usec, n = 0;
	int r;

	r = sd_bus_message_enter_container(reply, 'a', "(sssstt)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(sssstt)", &run_id, &status, &source, &workload,
						  &wall_ns, &finished_usec)) > 0) {
		char wall[32], finished[32];

		snprintf(wall, sizeof(wall), "%.3fs", (double)wall_ns / 1e9);
		format_usec(finished_usec, finished, sizeof(finished));
		if (table_add_row(table, (const char *const[]){ run_id, status, source, workload, wall, finished }) < 0 ||
		    json_array_append_new(array, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "run_id", run_id,
							  "status", status, "source_kind", source,
							  "workload_class", workload, "wall_time_ns",
							  json_u64_new(wall_ns), "finished_unix_usec",
							  json_u64_new(finished_usec))) < 0)
			return -ENOMEM;
		n++;
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(reply);
	if (r >= 0)
		r = sd_bus_message_read(reply, "t", ret_total);
	if (r < 0)
		return r;
	*ret_n = n;
	return 0;
}

int verb_runs(const ProfctlContext *ctx, int argc, char **argv)
{
	static const char *const headers[] = { "RUN", "STATUS", "SOURCE", "WORKLOAD", "WALL", "FINISHED" };
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(json_decrefp) json_t *array = json_array();
	_cleanup_table_ Table *table = NULL;
	uint64_t offset = 0, total = 0, n;
	int r;

	r = profctl_no_arguments(argc, argv, "List the run records profd keeps.");
	if (r <= 0)
		return r < 0 ? PROFCTL_EXIT_USAGE : PROFCTL_EXIT_SUCCESS;
	if (!array || table_new(ELEMENTSOF(headers), headers, &table) < 0)
		return PROFCTL_EXIT_FAILURE;
	if (profctl_bus_open(ctx, &bus) < 0)
		return PROFCTL_EXIT_FAILURE;
	/* page by page: each reply is bounded, however many runs there are */
	do {
		_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

		if (profctl_call_manager(bus, "cannot list runs", "ListRunsRange", &reply, "tu", offset,
					 (uint32_t)0) < 0)
			return PROFCTL_EXIT_FAILURE;
		r = read_page(reply, table, array, &n, &total);
		if (r < 0) {
			fprintf(stderr, "profctl: cannot read the run list: %s\n", strerror(-r));
			return PROFCTL_EXIT_FAILURE;
		}
		offset += n;
	} while (n > 0 && offset < total);
	if (profctl_print_list(ctx, array, table, "No runs.") < 0)
		return PROFCTL_EXIT_FAILURE;
	return PROFCTL_EXIT_SUCCESS;
}
