/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-target.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "bus-errors.h"
#include "caller-text.h"
#include "cleanup.h"
#include "task-list.h"
#include "unwinder-pool.h"

static int open_cgroup(const char *path, const char *unit, SamplingTarget **ret,
		       sd_bus_error *error)
{
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	int r;

	r = sampling_target_new_cgroup(path, ret);
	if (r == -EINVAL)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "cgroup '%s' is not a cgroup path (no '.', '..' or control "
					 "characters)", caller_text_quote(path, quoted));
	if (r == -ENOENT || r == -ENOTDIR)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "there is no cgroup '%s'", caller_text_quote(path, quoted));
	if (r == -EMEDIUMTYPE)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "'%s' is not a cgroup2 directory (is cgroup2 mounted?)",
					 caller_text_quote(path, quoted));
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "cannot open cgroup '%s': %s",
					       caller_text_quote(path, quoted), strerror(-r));
	if (unit && sampling_target_set_unit(*ret, unit) < 0) {
		*ret = sampling_target_free(*ret);
		return -ENOMEM;
	}
	return 0;
}

int session_target_unit_error(const CallerCreds *caller, const char *unit, int r,
			      sd_bus_error *error)
{
	char quoted[CALLER_TEXT_QUOTE_SIZE];

	switch (r) {
	case -EINVAL:
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "'%s' is not the name of a unit with processes (service, "
					 "scope, slice, socket, mount, swap)",
					 caller_text_quote(unit, quoted));
	case -ENOENT:
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "no unit '%s' is loaded, in the system manager or uid %u's "
					 "user manager", caller_text_quote(unit, quoted),
					 (unsigned)caller->uid);
	case -ENODEV:
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "unit '%s' has no control group now (is it running?)",
					 caller_text_quote(unit, quoted));
	case -EHOSTUNREACH:
		return sd_bus_error_setf(error, PROFD_ERROR_UNSUPPORTED,
					 "cannot ask systemd about unit '%s': the system manager "
					 "does not answer (give its cgroup instead)",
					 caller_text_quote(unit, quoted));
	case -ETIMEDOUT:
		return sd_bus_error_setf(error, PROFD_ERROR_UNSUPPORTED,
					 "cannot ask systemd about unit '%s': the system manager "
					 "did not answer in time (give its cgroup instead)",
					 caller_text_quote(unit, quoted));
	default:
		return sd_bus_error_set_errnof(error, r, "cannot resolve unit '%s': %s",
					       caller_text_quote(unit, quoted), strerror(-r));
	}
}

int session_target_open(const CallerCreds *caller, const SessionRequest *req,
			SamplingTarget **ret, sd_bus_error *error)
{
	_cleanup_(sampling_target_freep) SamplingTarget *t = NULL;
	const char *why;
	int r;

	if (req->system) {
		if (caller->uid != 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
						 "uid %u may not profile the whole machine: that is "
						 "root's", (unsigned)caller->uid);
		r = sampling_target_new_system(NULL, 0, &t);
		if (r < 0)
			return r;
		*ret = TAKE_PTR(t);
		return 0;
	}
	if (req->unit && !req->unit_cgroup)
		return -EINVAL; /* looked up first, without blocking (unit-lookup.h) */
	r = open_cgroup(req->unit ? req->unit_cgroup : req->cgroup, req->unit, &t, error);
	if (r < 0)
		return r;
	r = access_check_cgroup(caller, t->cgroup, t->cgroup_fd, &why);
	if (r < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "uid %u may not profile cgroup '%s': %s; a user profiles its "
					 "own units, below /user.slice/user-%u.slice/user@%u.service",
					 (unsigned)caller->uid, t->cgroup, why, (unsigned)caller->uid,
					 (unsigned)caller->uid);
	*ret = TAKE_PTR(t);
	return 0;
}

bool session_target_admit_system(void *userdata, uint32_t pid)
{
	pid_t parent;

	if (pid > INT32_MAX)
		return false;
	/*
	 * Gone already (records are read after the fact, bpf's buckets only at the
	 * end): its samples are the machine's all the same, and its files are known
	 * from its records, unless it was an unwinder of ours (killed, or gone
	 * idle): the pool knows their pids. A process gone that had reused such a
	 * pid is left out too, a rare loss.
	 */
	if (task_get_ppid((pid_t)pid, &parent) < 0)
		return !unwinder_pool_reaped_pid(userdata, (pid_t)pid);
	return parent != getpid();
}
