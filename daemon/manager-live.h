/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The live-run methods of the Manager object; userdata is the Manager. */

#include <systemd/sd-bus.h>

/* BeginRun(a{sv} options) -> (s run_id, o session, h ring): sample the caller's own process. */
int manager_method_begin_run(sd_bus_message *msg, void *userdata, sd_bus_error *error);
/* FinishRun(s run_id, s record_json): the program's record; answered once the joined record is stored. */
int manager_method_finish_run(sd_bus_message *msg, void *userdata, sd_bus_error *error);
