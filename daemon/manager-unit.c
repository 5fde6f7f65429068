/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StartSession of a systemd unit: its cgroup is asked of systemd first, without
 * blocking the loop (unit-lookup.h); the call is answered when systemd has.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "manager.h"
#include "session-target.h"
#include "session.h"
#include "unit-lookup.h"

/* Each call to systemd: a hung manager fails the StartSession after this, not profd. */
#define UNIT_LOOKUP_TIMEOUT_USEC (10ULL * 1000000ULL)

/* A StartSession waiting for its unit's cgroup. */
typedef struct PendingStart {
	Manager *m;
	sd_bus_message *msg; /* holds the strings req points to */
	SessionRequest req;
	int kernel;
	UnitLookup *lookup;
	sd_bus_track *client; /* stop_on_disconnect: the caller gone meanwhile ends the wait */
} PendingStart;

static PendingStart *pending_start_free(PendingStart *p)
{
	if (!p)
		return NULL;
	unit_lookup_free(p->lookup);
	sd_bus_track_unref(p->client);
	sd_bus_message_unref(p->msg);
	free(p);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(PendingStart *, pending_start_free);

static void forget_pending(Manager *m, PendingStart *p)
{
	for (size_t i = 0; i < m->n_pending_starts; i++)
		if (m->pending_starts[i] == p) {
			m->pending_starts[i] = m->pending_starts[--m->n_pending_starts];
			return;
		}
}

/* The system bus, attached to the loop: opened on first use, again after it closed. */
static int system_bus(Manager *m, sd_bus **ret)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	int r;

	if (m->system_bus && sd_bus_is_open(m->system_bus) > 0) {
		*ret = m->system_bus;
		return 0;
	}
	m->system_bus = sd_bus_flush_close_unref(m->system_bus);
	r = sd_bus_open_system(&bus);
	if (r < 0)
		return -EHOSTUNREACH;
	r = sd_bus_attach_event(bus, m->event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0)
		return r;
	*ret = m->system_bus = TAKE_PTR(bus);
	return 0;
}

/* The caller that wanted its session to end with it is gone: no session, no answer. */
static int on_client_gone(sd_bus_track *track, void *userdata)
{
	PendingStart *p = userdata;

	forget_pending(p->m, p);
	pending_start_free(p);
	return 0;
}

static void reply_failure(sd_bus_message *msg, int r, sd_bus_error *error)
{
	if (sd_bus_error_is_set(error))
		(void)sd_bus_reply_method_error(msg, error);
	else
		(void)sd_bus_reply_method_errno(msg, r, NULL);
}

static void on_unit_cgroup(UnitLookup *l, int r, const char *cgroup, void *userdata)
{
	_cleanup_(pending_start_freep) PendingStart *p = userdata;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	CallerCreds caller;
	Session *s;

	forget_pending(p->m, p);
	if (r >= 0)
		r = access_sender_creds(p->msg, &caller);
	else if (access_sender_creds(p->msg, &caller) >= 0)
		r = session_target_unit_error(&caller, p->req.unit, r, &error);
	if (r >= 0) {
		p->req.unit_cgroup = cgroup;
		r = manager_start_session(p->m, p->msg, &p->req, p->kernel, &s, &error);
	}
	if (r >= 0)
		r = sd_bus_reply_method_return(p->msg, "so", s->id, s->path);
	if (r < 0)
		reply_failure(p->msg, r, &error);
	sd_bus_error_free(&error);
}

int manager_start_unit_session(Manager *m, sd_bus_message *msg, const SessionRequest *req,
			       int kernel, sd_bus_error *error)
{
	_cleanup_(pending_start_freep) PendingStart *p = NULL;
	CallerCreds caller;
	sd_bus *system;
	int r;

	r = manager_start_caller(m, msg, &caller, error);
	if (r < 0)
		return r;
	/* lookups under way are bounded as sessions are: each may become one */
	if (m->n_pending_starts >= m->config.max_sessions)
		return sd_bus_error_setf(error, PROFD_ERROR_TOO_MANY_SESSIONS,
					 "%zu sessions of units are waiting for systemd; wait for "
					 "one to start", m->n_pending_starts);
	r = ARRAY_RESERVE(m->pending_starts, m->n_pending_starts_allocated,
			  m->n_pending_starts + 1, 4);
	if (r < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = (PendingStart){ .m = m, .msg = sd_bus_message_ref(msg), .req = *req, .kernel = kernel };
	if (req->stop_on_disconnect) {
		r = sd_bus_track_new(sd_bus_message_get_bus(msg), &p->client, on_client_gone, p);
		if (r >= 0)
			r = sd_bus_track_add_sender(p->client, msg);
		if (r < 0)
			return sd_bus_error_set_errnof(error, r, "cannot watch the client: %s",
						       strerror(-r));
	}
	r = system_bus(m, &system);
	if (r >= 0)
		r = unit_lookup_start(system, req->unit, caller.uid, UNIT_LOOKUP_TIMEOUT_USEC,
				      on_unit_cgroup, p, &p->lookup);
	if (r < 0)
		return session_target_unit_error(&caller, req->unit, r, error);
	m->pending_starts[m->n_pending_starts++] = TAKE_PTR(p);
	return 1; /* answered when systemd has */
}

void manager_fail_unit_sessions(Manager *m)
{
	while (m->n_pending_starts > 0) {
		_cleanup_(pending_start_freep) PendingStart *p = m->pending_starts[--m->n_pending_starts];

		(void)sd_bus_reply_method_errorf(p->msg, PROFD_ERROR_NOT_READY, "profd is shutting down");
	}
}
