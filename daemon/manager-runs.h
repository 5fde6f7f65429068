/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The run methods of the Manager object; userdata is the Manager. */

#include <systemd/sd-bus.h>

#include "manager.h"

/* ListRuns() -> a(sssstt): the newest runs the sender may see that fit in MaxListBytes, oldest first. */
int manager_method_list_runs(sd_bus_message *msg, void *userdata, sd_bus_error *error);
/* ListRunsRange(t offset, u count) -> (a(sssstt), t total): a page of them, and how many there are. */
int manager_method_list_runs_range(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int manager_method_get_run(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int manager_method_submit_run(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int manager_method_delete_run(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/*
 * A record as SubmitRun (and FinishRun) take it: parsed strictly, identity
 * strings within profd's rules (caller-text.h), at most MaxRecordBytes as
 * stored; *ret_json (if not NULL) is its compact form. -EINVAL, -E2BIG or
 * -EILSEQ with *ret_why when refused. Thread-safe.
 */
int manager_check_record(const Manager *m, const char *json, size_t len, RunProfile **ret,
			 char **ret_json, char **ret_why);
