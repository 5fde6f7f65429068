/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The org.profd.Profiler1.Session objects: one fallback vtable under
 * /org/profd/Profiler1/session, a find function that shows each caller only
 * the sessions it owns (root sees all), and a node enumerator for
 * introspection.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "export.h"
#include "log.h"
#include "session-export.h"
#include "session.h"

/* May the sender of the message being handled see 's'? Internal emission has no sender. */
static bool session_visible(sd_bus *bus, const Session *s)
{
	sd_bus_message *m = sd_bus_get_current_message(bus);
	uid_t uid;

	if (!m || !sd_bus_message_get_sender(m))
		return true;
	if (access_sender_uid(m, &uid) < 0)
		return false;
	return access_check_owner(uid, s->owner) == 0;
}

int session_object_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
			void **ret_found, sd_bus_error *error)
{
	Manager *m = userdata;
	const char *id;
	Session *s;

	id = path + strlen(PROFD_SESSION_PREFIX);
	if (*id != '/')
		return 0;
	s = manager_find_session(m, id + 1);
	if (!s || !session_visible(bus, s))
		return 0;
	*ret_found = s;
	return 1;
}

int session_node_enumerator(sd_bus *bus, const char *path, void *userdata, char ***ret_nodes,
			    sd_bus_error *error)
{
	Manager *m = userdata;
	char **nodes;
	size_t n = 0;

	nodes = calloc(m->n_sessions + 1, sizeof(char *));
	if (!nodes)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_sessions; i++) {
		if (!session_visible(bus, m->sessions[i]))
			continue;
		nodes[n] = strdup(m->sessions[i]->path);
		if (!nodes[n]) {
			for (size_t j = 0; j < n; j++)
				free(nodes[j]);
			free(nodes);
			return -ENOMEM;
		}
		n++;
	}
	*ret_nodes = nodes;
	return 1;
}

/* Counters read live from the engine while sampling. */
static const SamplingMetrics *session_metrics(Session *s)
{
	if (s->state == SESSION_SAMPLING && s->sampling) {
		SamplingMetrics live;

		sampling_session_get_metrics(s->sampling, &live);
		s->metrics.samples_captured = live.samples_captured;
		s->metrics.samples_dropped = live.samples_dropped;
		s->metrics.threads_seen = live.threads_seen;
		s->metrics.buffer_full = live.buffer_full;
	}
	return &s->metrics;
}

static int property_get(sd_bus *bus, const char *path, const char *interface,
			const char *property, sd_bus_message *reply, void *userdata,
			sd_bus_error *error)
{
	Session *s = userdata;
	const SamplingMetrics *mt = session_metrics(s);
	bool finished = !session_is_busy(s) || s->state == SESSION_RESOLVING;

	if (strcmp(property, "Id") == 0)
		return sd_bus_message_append(reply, "s", s->id);
	if (strcmp(property, "Pid") == 0)
		return sd_bus_message_append(reply, "u", (uint32_t)s->pid);
	if (strcmp(property, "State") == 0)
		return sd_bus_message_append(reply, "s", session_state_to_string(s->state));
	if (strcmp(property, "Backend") == 0)
		return sd_bus_message_append(reply, "s", s->backend ?: "");
	if (strcmp(property, "Event") == 0)
		return sd_bus_message_append(reply, "s", s->event ?: "");
	if (strcmp(property, "RequestedHz") == 0)
		return sd_bus_message_append(reply, "u", s->requested_hz);
	if (strcmp(property, "Hz") == 0)
		return sd_bus_message_append(reply, "u", mt->hz);
	if (strcmp(property, "RequestedDurationUSec") == 0)
		return sd_bus_message_append(reply, "t", s->requested_duration_usec);
	if (strcmp(property, "DurationUSec") == 0)
		/* the planned window while sampling, the window covered after */
		return sd_bus_message_append(reply, "t",
					     (finished ? mt->duration_nanos
						       : mt->effective_duration_nanos) / 1000);
	if (strcmp(property, "Clamped") == 0)
		return sd_bus_message_append(reply, "b", (int)mt->clamped);
	if (strcmp(property, "SamplesCaptured") == 0)
		return sd_bus_message_append(reply, "t", mt->samples_captured);
	if (strcmp(property, "SamplesDropped") == 0)
		return sd_bus_message_append(reply, "t", mt->samples_dropped);
	if (strcmp(property, "ThreadsSeen") == 0)
		return sd_bus_message_append(reply, "u", (uint32_t)mt->threads_seen);
	if (strcmp(property, "ThreadsAtStart") == 0)
		return sd_bus_message_append(reply, "u", (uint32_t)mt->threads_at_start);
	if (strcmp(property, "BufferFull") == 0)
		return sd_bus_message_append(reply, "b", (int)mt->buffer_full);
	if (strcmp(property, "RunId") == 0)
		return sd_bus_message_append(reply, "s", s->run_id ?: "");
	if (strcmp(property, "Error") == 0)
		return sd_bus_message_append(reply, "s", s->error ?: "");
	return -ENOENT;
}

static int method_stop(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	session_stop(userdata);
	return sd_bus_reply_method_return(m, NULL);
}

/* The format 'name' asks for, once the session has a profile to export. */
static int export_request_format(const Session *s, const char *name, ExportFormat *ret,
				 sd_bus_error *error)
{
	ExportFormat format;

	if (export_format_from_string(name, &format) < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "unknown export format '%s' (known: folded, pprof, firefox, "
					 "speedscope, svg, metrics, record)", name);
	if (session_is_busy(s))
		return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY,
					 "session %s is still %s; wait for its Finished signal", s->id,
					 session_state_to_string(s->state));
	*ret = format;
	return 0;
}

static int method_export(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Session *s = userdata;
	ExportFormat format;
	const char *name;
	int r;

	r = sd_bus_message_read(m, "s", &name);
	if (r < 0)
		return r;
	r = export_request_format(s, name, &format, error);
	if (r < 0)
		return r;
	return session_export_reply(s, m, format, -1, error);
}

static int method_export_to_fd(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Session *s = userdata;
	ExportFormat format;
	const char *name;
	int fd, r;

	r = sd_bus_message_read(m, "sh", &name, &fd);
	if (r < 0)
		return r;
	r = export_request_format(s, name, &format, error);
	if (r < 0)
		return r;
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	return session_export_reply(s, m, format, fd, error);
}

static int method_get_metrics(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	_cleanup_free_ char *json = NULL;
	Session *s = userdata;
	int r;

	r = session_format_live_metrics(s, &json);
	if (r == -ENODATA)
		return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY,
					 "session %s has no metrics%s%s", s->id, s->error ? ": " : "",
					 s->error ?: "");
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(m, "s", json);
}

static int method_release(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Session *s = userdata;
	Manager *manager = s->manager;
	int r = sd_bus_reply_method_return(m, NULL);

	session_release(s); /* may free s */
	manager_update_status(manager);
	return r;
}

#define PROP(name, sig, flags) SD_BUS_PROPERTY(name, sig, property_get, 0, flags)
#define CONST SD_BUS_VTABLE_PROPERTY_CONST
#define CHANGES SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
/* counters move with every sample: read them, nobody is told */
#define LIVE 0

const sd_bus_vtable session_vtable[] = {
	SD_BUS_VTABLE_START(0),
	PROP("Id", "s", CONST),
	PROP("Pid", "u", CONST),
	PROP("State", "s", CHANGES),
	PROP("Backend", "s", CONST),
	PROP("Event", "s", CONST),
	PROP("RequestedHz", "u", CONST),
	PROP("Hz", "u", CONST),
	PROP("RequestedDurationUSec", "t", CONST),
	PROP("DurationUSec", "t", CHANGES),
	PROP("Clamped", "b", CONST),
	PROP("SamplesCaptured", "t", LIVE),
	PROP("SamplesDropped", "t", LIVE),
	PROP("ThreadsSeen", "u", LIVE),
	PROP("ThreadsAtStart", "u", CONST),
	PROP("BufferFull", "b", CHANGES),
	PROP("RunId", "s", CHANGES),
	PROP("Error", "s", CHANGES),
	SD_BUS_METHOD("Stop", "", "", method_stop, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Export", SD_BUS_ARGS("s", format), SD_BUS_RESULT("ay", data),
				method_export, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ExportToFd", SD_BUS_ARGS("s", format, "h", fd), SD_BUS_NO_RESULT,
				method_export_to_fd, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetMetrics", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
				method_get_metrics, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("Release", "", "", method_release, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("Finished", SD_BUS_ARGS("s", state), 0),
	SD_BUS_VTABLE_END
};
