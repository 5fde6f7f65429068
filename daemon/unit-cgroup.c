/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit-cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-address.h"
#include "cleanup.h"
#include "dir-stream.h"
#include "sampling-target.h"

#define UNIT_NAME_MAX 255
/* A user's subtree is the user's to shape: the search for a unit in it is bounded. */
#define FIND_MAX_DEPTH 16
#define FIND_MAX_DIRS 4096

/* Unit types with a control group, and the D-Bus interface that has its ControlGroup. */
static const struct {
	const char *suffix, *interface;
} cgroup_types[] = {
	{ ".service", "org.freedesktop.systemd1.Service" },
	{ ".scope", "org.freedesktop.systemd1.Scope" },
	{ ".slice", "org.freedesktop.systemd1.Slice" },
	{ ".socket", "org.freedesktop.systemd1.Socket" },
	{ ".mount", "org.freedesktop.systemd1.Mount" },
	{ ".swap", "org.freedesktop.systemd1.Swap" },
};

const char *unit_interface(const char *unit)
{
	size_t len = strlen(unit);

	for (size_t i = 0; i < ELEMENTSOF(cgroup_types); i++) {
		size_t n = strlen(cgroup_types[i].suffix);

		if (len > n && strcmp(unit + len - n, cgroup_types[i].suffix) == 0)
			return cgroup_types[i].interface;
	}
	return NULL;
}

bool unit_name_has_cgroup(const char *unit)
{
	size_t len = unit ? strlen(unit) : 0;

	/* systemd's unit name alphabet; '\' for its escapes */
	if (len == 0 || len > UNIT_NAME_MAX || strspn(unit, "abcdefghijklmnopqrstuvwxyz"
							  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
							  "0123456789:-_.\\@") != len)
		return false;
	return unit[0] != '.' && unit_interface(unit) != NULL;
}

int unit_cgroup_get(sd_bus *bus, const char *unit, char **ret_cgroup, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_free_ char *cgroup = NULL;
	const char *path;
	int r;

	if (!unit_name_has_cgroup(unit))
		return -EINVAL;
	r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", "GetUnit", error, &reply, "s",
			       unit);
	if (r < 0)
		return sd_bus_error_has_name(error, "org.freedesktop.systemd1.NoSuchUnit") ? -ENOENT : r;
	r = sd_bus_message_read(reply, "o", &path);
	if (r < 0)
		return r;
	r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, unit_interface(unit),
				       "ControlGroup", error, &cgroup);
	if (r < 0)
		return r;
	if (!cgroup[0])
		return -ENODEV;
	*ret_cgroup = TAKE_PTR(cgroup);
	return 0;
}

int user_manager_open(uid_t uid, sd_bus **ret)
{
	char address[80];

	snprintf(address, sizeof(address), "unix:path=/run/user/%u/systemd/private", (unsigned)uid);
	return bus_open_address(address, false, ret);
}

/* The unit's cgroup per the system manager, or else the user manager of 'uid'. */
static int manager_unit_cgroup(bool user, uid_t uid, const char *unit, char **ret_cgroup)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	r = user ? user_manager_open(uid, &bus) : sd_bus_open_system(&bus);
	if (r < 0)
		return r;
	r = unit_cgroup_get(bus, unit, ret_cgroup, &error);
	sd_bus_error_free(&error);
	return r;
}

int unit_cgroup_resolve(const char *unit, uid_t uid, char **ret_cgroup)
{
	/* a user's own unit before a system unit of the same name (dbus.service is both) */
	bool user_first = uid != 0;
	int r, k;

	if (!unit_name_has_cgroup(unit))
		return -EINVAL;
	r = manager_unit_cgroup(user_first, uid, unit, ret_cgroup);
	if (r >= 0 || r == -ENODEV)
		return r;
	k = manager_unit_cgroup(!user_first, uid, unit, ret_cgroup);
	if (k >= 0 || k == -ENODEV || k == -ENOENT)
		return k;
	return r == -ENOENT ? r : -EHOSTUNREACH; /* -ENOENT: a manager answered, it knows none */
}

/*
 * The directory named 'unit' below the cgroup at 'dir_fd' (systemd names each
 * unit's cgroup after the unit), a child before a grandchild: its path
 * relative to 'dir_fd'. -ENOENT when there is none within the bounds.
 */
static int find_unit_dir(int dir_fd, const char *unit, unsigned depth, unsigned *budget,
			 char **ret)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int r;

	if (depth > FIND_MAX_DEPTH)
		return -ENOENT;
	r = dir_fd_open_stream(dir_fd, &d);
	if (r < 0)
		return r;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && strcmp(de->d_name, unit) == 0) {
			*ret = strdup(unit);
			return *ret ? 0 : -ENOMEM;
		}
	rewinddir(d);
	while ((de = readdir(d))) {
		_cleanup_free_ char *below = NULL;
		_cleanup_close_ int child = -1;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (*budget == 0)
			return -ENOENT;
		(*budget)--;
		child = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (child < 0)
			continue; /* removed meanwhile */
		r = find_unit_dir(child, unit, depth + 1, budget, &below);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		return asprintf(ret, "%s/%s", de->d_name, below) < 0 ? -ENOMEM : 0;
	}
	return -ENOENT;
}

void user_manager_unit(uid_t uid, char ret[static USER_MANAGER_UNIT_MAX])
{
	snprintf(ret, USER_MANAGER_UNIT_MAX, "user@%u.service", (unsigned)uid);
}

int unit_cgroup_below(const char *user_cgroup, const char *unit, char **ret_cgroup)
{
	_cleanup_(sampling_target_freep) SamplingTarget *user = NULL;
	_cleanup_free_ char *below = NULL;
	unsigned budget = FIND_MAX_DIRS;
	int r;

	r = sampling_target_new_cgroup(user_cgroup, &user);
	if (r < 0)
		return r == -ENOMEM ? r : -ENOENT;
	r = find_unit_dir(user->cgroup_fd, unit, 0, &budget, &below);
	if (r < 0)
		return r;
	return asprintf(ret_cgroup, "%s/%s", user->cgroup, below) < 0 ? -ENOMEM : 0;
}
