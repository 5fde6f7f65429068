/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit-lookup.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "unit-cgroup.h"

/* Who is asked: first, and after "no such unit", the other. */
typedef enum LookupStep {
	STEP_USER_UNIT,   /* the unit below the caller's user@UID.service */
	STEP_SYSTEM_UNIT, /* the unit of the system manager */
} LookupStep;

struct UnitLookup {
	sd_bus *system;
	char *unit;
	uid_t uid;
	uint64_t timeout_usec;
	LookupStep step;
	bool second;        /* the step after the first answered "no such unit" */
	const char *asked;  /* the unit asked of systemd now: 'unit' or user_unit */
	char user_unit[USER_MANAGER_UNIT_MAX];
	sd_bus_slot *slot;  /* the call under way */
	UnitLookupDone done;
	void *userdata;
};

UnitLookup *unit_lookup_free(UnitLookup *l)
{
	if (!l)
		return NULL;
	sd_bus_slot_unref(l->slot);
	sd_bus_unref(l->system);
	free(l->unit);
	free(l);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(UnitLookup *, unit_lookup_free);

static int on_get_unit(sd_bus_message *reply, void *userdata, sd_bus_error *error);

/* Call a method of systemd's, within the lookup's timeout; its reply goes to 'handler'. */
static int call_systemd(UnitLookup *l, const char *path, const char *interface,
			const char *member, sd_bus_message_handler_t handler, const char *types,
			...)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	va_list ap;
	int r;

	l->slot = sd_bus_slot_unref(l->slot);
	r = sd_bus_message_new_method_call(l->system, &m, "org.freedesktop.systemd1", path,
					   interface, member);
	if (r < 0)
		return r;
	va_start(ap, types);
	r = sd_bus_message_appendv(m, types, ap);
	va_end(ap);
	if (r < 0)
		return r;
	return sd_bus_call_async(l->system, &l->slot, m, handler, l, l->timeout_usec);
}

/* The call's failure as unit_cgroup_get() reports it: NoSuchUnit is -ENOENT. */
static int reply_error(sd_bus_message *reply)
{
	const sd_bus_error *e = sd_bus_message_get_error(reply);

	if (sd_bus_error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit"))
		return -ENOENT;
	return -sd_bus_error_get_errno(e);
}

/* Ask systemd about the current step's unit: GetUnit first. */
static int ask(UnitLookup *l)
{
	int r;

	l->asked = l->step == STEP_USER_UNIT ? l->user_unit : l->unit;
	r = call_systemd(l, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
			 "GetUnit", on_get_unit, "s", l->asked);
	return r == -ENOMEM ? r : r < 0 ? -EHOSTUNREACH : 0;
}

/* The step's answer r (and cgroup): the end, or the next step. */
static void step_done(UnitLookup *l, int r, const char *cgroup)
{
	_cleanup_free_ char *found = NULL;

	if (l->step == STEP_USER_UNIT) {
		if (r == -ENODEV)
			r = -ENOENT; /* no user manager runs: none of its units does either */
		if (r >= 0) {
			r = unit_cgroup_below(cgroup, l->unit, &found);
			cgroup = found;
		}
	}
	if (r == -ENOENT && !l->second) {
		/* a user's own unit first; then the system's (for root: the other way round) */
		l->second = true;
		l->step = l->step == STEP_USER_UNIT ? STEP_SYSTEM_UNIT : STEP_USER_UNIT;
		r = ask(l);
		if (r >= 0)
			return;
	}
	l->slot = sd_bus_slot_unref(l->slot);
	l->done(l, r, r >= 0 ? cgroup : NULL, l->userdata); /* may free l */
}

static int on_control_group(sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	UnitLookup *l = userdata;
	const char *cgroup = NULL;
	int r;

	if (sd_bus_message_is_method_error(reply, NULL))
		r = reply_error(reply);
	else
		r = sd_bus_message_read(reply, "v", "s", &cgroup);
	if (r >= 0)
		r = cgroup && cgroup[0] ? 0 : -ENODEV; /* no cgroup now: inactive */
	step_done(l, r, cgroup);
	return 0;
}

static int on_get_unit(sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	UnitLookup *l = userdata;
	const char *path;
	int r;

	if (sd_bus_message_is_method_error(reply, NULL))
		r = reply_error(reply);
	else
		r = sd_bus_message_read(reply, "o", &path);
	if (r >= 0)
		r = call_systemd(l, path, "org.freedesktop.DBus.Properties", "Get", on_control_group,
				 "ss", unit_interface(l->asked), "ControlGroup");
	if (r < 0)
		step_done(l, r, NULL);
	return 0;
}

int unit_lookup_start(sd_bus *system, const char *unit, uid_t uid, uint64_t timeout_usec,
		      UnitLookupDone done, void *userdata, UnitLookup **ret)
{
	_cleanup_(unit_lookup_freep) UnitLookup *l = NULL;
	int r;

	if (!unit_name_has_cgroup(unit))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->system = sd_bus_ref(system);
	l->unit = strdup(unit);
	if (!l->unit)
		return -ENOMEM;
	l->uid = uid;
	l->timeout_usec = timeout_usec;
	l->done = done;
	l->userdata = userdata;
	user_manager_unit(uid, l->user_unit);
	/* a user's own unit before a system unit of the same name: only hers can be hers to profile */
	l->step = uid != 0 ? STEP_USER_UNIT : STEP_SYSTEM_UNIT;
	r = ask(l);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(l);
	return 0;
}
