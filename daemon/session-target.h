/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The target of a StartSession with pid 0: its `cgroup`, `unit` or `system`
 * option, resolved (a unit through systemd, asked before: unit-lookup.h)
 * and checked against who asks (DESIGN.md §8): the whole machine and other
 * users' cgroups are root's; a user profiles only cgroups within its own
 * user@UID.service, the processes inside then one by one (access.h).
 */

#include <systemd/sd-bus.h>

#include "access.h"
#include "sampling-target.h"
#include "session.h"

/*
 * Exactly one of req->cgroup, ->unit (with its ->unit_cgroup, looked up
 * before), ->system: the target, or a bus error (InvalidArgs, AccessDenied, ...).
 */
int session_target_open(const CallerCreds *caller, const SessionRequest *req,
			SamplingTarget **ret, sd_bus_error *error);

/* The bus error for a failed lookup of 'unit' (unit-lookup.h: its r). */
int session_target_unit_error(const CallerCreds *caller, const char *unit, int r,
			      sd_bus_error *error);

/*
 * A ProcessAdmitFn for the whole machine, 'userdata' the UnwinderPool: every
 * process but profd's own children (its unwinder helpers, and those gone the
 * pool knew; profd itself the engine leaves out).
 */
bool session_target_admit_system(void *userdata, uint32_t pid);
