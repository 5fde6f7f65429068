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
/* The D-Bus interface with the ControlGroup of such a unit ("org.freedesktop.systemd1.Service"). */
const char *unit_interface(const char *unit);

/* "user@UID.service", the unit of uid's user manager. */
#define USER_MANAGER_UNIT_MAX 32
void user_manager_unit(uid_t uid, char ret[static USER_MANAGER_UNIT_MAX]);

/*
 * A unit of a user manager whose own cgroup is 'user_cgroup': the directory
 * named 'unit' below it (systemd names each unit's cgroup after the unit), a
 * child before a grandchild, within bounds. -ENOENT none.
 */
int unit_cgroup_below(const char *user_cgroup, const char *unit, char **ret_cgroup);

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
