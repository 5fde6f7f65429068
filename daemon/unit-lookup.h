/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A unit's control group asked of the system manager without blocking
 * profd's loop: GetUnit then the unit's ControlGroup, each sent with
 * sd_bus_call_async() on a system bus connection attached to the loop, so
 * that a slow or hung systemd delays only the StartSession that named the
 * unit. A user unit is the directory of its name below the cgroup of
 * user@UID.service (under its unit profd cannot reach a user's manager, and
 * it is the user's to answer or not). For a uid other than 0 the user's unit
 * is looked for first (a unit of hers is meant over a system unit of the
 * same name, dbus.service is both: only hers can be hers to profile); for
 * root the system's.
 */

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

typedef struct UnitLookup UnitLookup;

/*
 * The end of a lookup: 0 and the cgroup (relative to the cgroup2 mount), or
 * -ENOENT no manager knows the unit (also when uid runs no manager), -ENODEV
 * it has no cgroup now (inactive), -EHOSTUNREACH systemd is not on the
 * system bus, -ETIMEDOUT it did not answer in time, another bus error. The
 * lookup may be freed in it.
 */
typedef void (*UnitLookupDone)(UnitLookup *l, int r, const char *cgroup, void *userdata);

/*
 * Look 'unit' up for 'uid' on 'system' (attached to an event loop), each call
 * given 'timeout_usec'; 'done' runs from the loop, never from here.
 */
int unit_lookup_start(sd_bus *system, const char *unit, uid_t uid, uint64_t timeout_usec,
		      UnitLookupDone done, void *userdata, UnitLookup **ret);
/* Cancel it if it still runs ('done' is not called then). */
UnitLookup *unit_lookup_free(UnitLookup *l);
