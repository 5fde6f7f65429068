/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A systemd unit's control group, asked of systemd itself over D-Bus
 * (org.freedesktop.systemd1: GetUnit, then the unit type's ControlGroup), as
 * `systemctl status` shows it: "/system.slice/foo.service", relative to the
 * cgroup2 mount. profd and profctl --local share it.
 */

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/* Is 'unit' a unit name with a type that owns a control group (service, scope, slice, ...)? */
bool unit_name_has_cgroup(const char *unit);

/*
 * The control group of 'unit' per the manager on 'bus'. -EINVAL a malformed
 * name or a unit type without one, -ENOENT systemd knows no such unit,
 * -ENODEV it has none now (inactive); other errors from the bus, in 'error'.
 */
int unit_cgroup_get(sd_bus *bus, const char *unit, char **ret_cgroup, sd_bus_error *error);

/* The user manager of 'uid' on its private socket (it lets in root and that uid). */
int user_manager_open(uid_t uid, sd_bus **ret);

/*
 * The control group of 'unit' from the system manager, else from the user
 * manager of 'uid' (user units); for a 'uid' other than 0 the user manager is
 * asked first (a unit of hers is meant over a system unit of the same name,
 * dbus.service is both). -EINVAL not a unit with processes, -ENOENT no
 * manager knows it, -ENODEV it has none (inactive), -EHOSTUNREACH no manager
 * answered.
 */
int unit_cgroup_resolve(const char *unit, uid_t uid, char **ret_cgroup);

/*
 * The same asked of the system manager alone (profd: under its unit a user's
 * manager is out of reach, and it is the user's to answer or not): a user
 * unit is found by name below the cgroup of user@UID.service, first for a
 * 'uid' other than 0 as above. -ENOENT also when 'uid' runs no manager.
 */
int unit_cgroup_resolve_system(const char *unit, uid_t uid, char **ret_cgroup);
