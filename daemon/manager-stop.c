/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profd's orderly exit (SIGTERM, SIGINT, SIGHUP, the bus gone), in systemd's manner:
 * nobody who called is left without an answer, every running session is saved.
 *
 * 1. The bus name goes first: new callers reach the next profd (activation)
 *    or hear that there is none, instead of one that is leaving.
 * 2. Sessions are stopped, exports cancelled, and the loop goes on serving
 *    until nothing is busy: no session sampling or resolving, no request in
 *    progress, the name's release confirmed (the bus delivers in order, so
 *    every call routed to us by that name came before the reply and was
 *    dispatched) and nothing read but not yet dispatched.
 * 3. After the loop (also after the stop timeout), calls that still reached
 *    us, to our unique name, are answered with NoServer.
 * Replies queued meanwhile are flushed when the manager closes the bus.
 */
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "export-stream.h"
#include "log.h"
#include "manager.h"
#include "session.h"

/* Longest wait for running sessions to be saved and requests answered. */
#define STOP_TIMEOUT_USEC (20ULL * 1000000ULL)
/*
 * How long the unwinders have to finish their sessions once stopping (their
 * backlogs: a second of samples at most): well within the wait above, so that
 * a hung one's sessions end "failed" with its reason (and their files are
 * written) rather than being cut off unfinished.
 */
#define STOP_UNWINDER_TIMEOUT_USEC (STOP_TIMEOUT_USEC / 2)
/* Calls answered with NoServer after the loop, at most: callers may keep coming. */
#define REFUSE_MAX 10000

static bool manager_is_idle(Manager *m)
{
	uint64_t unread = 0;

	if (manager_count_busy_sessions(m, (uid_t)-1) > 0 || budget_used(m->requests, (uid_t)-1) > 0)
		return false;
	/* until the bus confirms the release, calls to the name may still be on their way */
	if (m->releasing_name)
		return false;
	return !m->bus || sd_bus_get_n_queued_read(m->bus, &unread) < 0 || unread == 0;
}

void manager_check_idle(Manager *m)
{
	if (!m->stopping || m->exited)
		return;
	/* an export begun while stopping must not hold up the exit either */
	export_server_cancel_all(m->exports);
	if (manager_is_idle(m))
		sd_event_exit(m->event, m->exit_status);
}

/* After every dispatch while stopping: whatever it was may have been the last busy thing. */
static int on_stop_check(sd_event_source *s, void *userdata)
{
	manager_check_idle(userdata);
	return 0;
}

static int on_stop_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;

	log_warning("sessions and requests did not finish within %llu s of the stop; exiting",
		    STOP_TIMEOUT_USEC / 1000000ULL);
	return sd_event_exit(m->event, m->exit_status);
}

static int on_name_released(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	Manager *m = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);

	m->releasing_name = sd_bus_slot_unref(m->releasing_name);
	/* without a bus the name is gone anyway */
	if (e && sd_bus_is_open(m->bus) > 0)
		log_warning("cannot release the bus name '%s': %s", PROFD_BUS_NAME, e->message);
	return 0;
}

static void manager_release_name(Manager *m)
{
	int r;

	if (!m->bus || sd_bus_is_open(m->bus) <= 0)
		return;
	r = sd_bus_release_name_async(m->bus, &m->releasing_name, PROFD_BUS_NAME, on_name_released, m);
	if (r < 0)
		log_warning("cannot release the bus name '%s': %s", PROFD_BUS_NAME, strerror(-r));
}

void manager_begin_stop(Manager *m, int exit_status)
{
	uint64_t now = 0;
	int r;

	if (!m->stopping) {
		m->stopping = true;
		m->exit_status = exit_status;
		log_info("stopping: ending %u running sessions", manager_count_busy_sessions(m, (uid_t)-1));
		sd_notify(false, "STOPPING=1\nSTATUS=saving running sessions");
		manager_release_name(m);
		if (m->unwinders)
			unwinder_pool_hurry(m->unwinders, STOP_UNWINDER_TIMEOUT_USEC);
		r = sd_event_add_post(m->event, &m->stop_check, on_stop_check, m);
		if (r >= 0)
			r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
		if (r >= 0)
			r = sd_event_add_time(m->event, &m->stop_timeout, CLOCK_MONOTONIC,
					      now + STOP_TIMEOUT_USEC, 0, on_stop_timeout, m);
		if (r < 0) {
			/* cannot wait for anything: save what can be saved on the way out */
			log_error("cannot wait for sessions to be saved: %s", strerror(-r));
			sd_event_exit(m->event, m->exit_status);
		}
	}
	/* a reader that takes its time must not hold up the exit, nor a systemd that does */
	export_server_cancel_all(m->exports);
	manager_fail_unit_sessions(m);
	for (size_t i = 0; i < m->n_sessions; i++)
		session_stop(m->sessions[i]);
	manager_check_idle(m);
}

/* After the loop, before any handler: what still arrives is refused, not dropped. */
static int filter_calls_after_exit(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;

	if (!m->exited || !sd_bus_message_is_method_call(msg, NULL, NULL))
		return 0;
	sd_bus_reply_method_errorf(msg, SD_BUS_ERROR_NO_SERVER,
				   "profd is stopping; call again to reach its next instance");
	return 1;
}

/* Nobody can reach us any more, but the running sessions can still be saved. */
static int on_bus_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;

	if (m->stopping)
		return 0; /* the stop goes on, its exit status stands */
	log_error("lost the bus connection; saving running sessions, then exiting");
	manager_begin_stop(m, EXIT_FAILURE);
	return 0;
}

int manager_add_stop_handlers(Manager *m)
{
	int r;

	r = sd_bus_add_filter(m->bus, NULL, filter_calls_after_exit, m);
	if (r < 0)
		return r;
	/* a local match: sd-bus's own signal, in place of sd_bus_set_exit_on_disconnect() */
	return sd_bus_match_signal(m->bus, NULL, NULL, "/org/freedesktop/DBus/Local",
				   "org.freedesktop.DBus.Local", "Disconnected", on_bus_disconnected, m);
}

void manager_refuse_remaining_calls(Manager *m)
{
	m->exited = true;
	for (unsigned i = 0; m->bus && i < REFUSE_MAX && sd_bus_process(m->bus, NULL) > 0; i++)
		;
}
