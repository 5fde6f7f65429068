/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The org.profd.Profiler1.Session objects: one fallback vtable under
 * /org/profd/Profiler1/session, made from the property table
 * (session-properties.h); a find function that shows each caller only the
 * sessions it owns (root sees all); a node enumerator for introspection; and
 * the session's signals, sent only to the connection that started it
 * (bus-unicast.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "bus-errors.h"
#include "bus-unicast.h"
#include "caller-text.h"
#include "caller-text.h"
#include "cleanup.h"
#include "export.h"
#include "log.h"
#include "session-export-filtered.h"
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
	/* every property read goes through here: the live counters are current for it */
	session_refresh(s);
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

/* ---- properties: typed getters of the field at the vtable's offset ---- */

static int property_get_id(sd_bus *bus, const char *path, const char *interface,
			   const char *property, sd_bus_message *reply, void *userdata,
			   sd_bus_error *error)
{
	return sd_bus_message_append_basic(reply, 's', userdata);
}

static int property_get_u32(sd_bus *bus, const char *path, const char *interface,
			    const char *property, sd_bus_message *reply, void *userdata,
			    sd_bus_error *error)
{
	return sd_bus_message_append_basic(reply, 'u', userdata);
}

static int property_get_u64(sd_bus *bus, const char *path, const char *interface,
			    const char *property, sd_bus_message *reply, void *userdata,
			    sd_bus_error *error)
{
	return sd_bus_message_append_basic(reply, 't', userdata);
}

static int property_get_bool(sd_bus *bus, const char *path, const char *interface,
			     const char *property, sd_bus_message *reply, void *userdata,
			     sd_bus_error *error)
{
	int b = *(const bool *)userdata; /* D-Bus booleans are 32 bits */

	return sd_bus_message_append_basic(reply, 'b', &b);
}

static int property_get_string(sd_bus *bus, const char *path, const char *interface,
			       const char *property, sd_bus_message *reply, void *userdata,
			       sd_bus_error *error)
{
	return sd_bus_message_append_basic(reply, 's', *(const char **)userdata ?: "");
}

static int property_get_state(sd_bus *bus, const char *path, const char *interface,
			      const char *property, sd_bus_message *reply, void *userdata,
			      sd_bus_error *error)
{
	return sd_bus_message_append_basic(reply, 's',
					   session_state_to_string(*(const SessionState *)userdata));
}

#define SIG_ID "s"
#define SIG_U32 "u"
#define SIG_U64 "t"
#define SIG_BOOL "b"
#define SIG_STRING "s"
#define SIG_STATE "s"
#define GETTER_ID property_get_id
#define GETTER_U32 property_get_u32
#define GETTER_U64 property_get_u64
#define GETTER_BOOL property_get_bool
#define GETTER_STRING property_get_string
#define GETTER_STATE property_get_state
#define FLAGS_CONST SD_BUS_VTABLE_PROPERTY_CONST
#define FLAGS_CHANGE SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define FLAGS_LIVE 0 /* counters move with every sample: read them, nobody is told */

#define BUS_PROPERTY(name, kind, field, flags) \
	SD_BUS_PROPERTY(name, SIG_##kind, GETTER_##kind, offsetof(Session, field), FLAGS_##flags),
#define BOTH_PROPERTY(name, key, kind, field, flags) BUS_PROPERTY(name, kind, field, flags)
#define NO_PROPERTY(...)

/* The properties PropertiesChanged carries: the table's CHANGE ones. */
#define CHANGED_CONST(name)
#define CHANGED_LIVE(name)
#define CHANGED_CHANGE(name) name,
#define BUS_CHANGED(name, kind, field, flags) CHANGED_##flags(name)
#define BOTH_CHANGED(name, key, kind, field, flags) BUS_CHANGED(name, kind, field, flags)

static const char *const changed_properties[] = {
	SESSION_PROPERTY_TABLE(BOTH_CHANGED, NO_PROPERTY, BUS_CHANGED)
	NULL
};

void session_emit_changed(Session *s)
{
	int r;

	if (!s->manager->bus || !s->client_name)
		return;
	r = bus_properties_changed_to(s->manager->bus, s->client_name, s->path,
				      PROFD_SESSION_INTERFACE, session_vtable, s, changed_properties);
	if (r < 0)
		log_warning("cannot announce the state of session %s: %s", s->id, strerror(-r));
}

void session_emit_finished(Session *s)
{
	int r;

	if (!s->manager->bus || !s->client_name)
		return;
	r = bus_signal_to(s->manager->bus, s->client_name, s->path, PROFD_SESSION_INTERFACE,
			  "Finished", "s", session_state_to_string(s->state));
	if (r < 0)
		log_warning("cannot announce the end of session %s: %s", s->id, strerror(-r));
}

/* ---- methods ---- */

static int method_stop(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	session_stop(userdata);
	return sd_bus_reply_method_return(m, NULL);
}

/* The format 'name' asks for, once the session has a profile to export. */
static int export_request_format(const Session *s, const char *name, ExportFormat *ret,
				 sd_bus_error *error)
{
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	ExportFormat format;

	if (export_format_from_string(name, &format) < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "unknown export format '%s' (known: folded, pprof, firefox, "
					 "speedscope, svg, metrics, record)", caller_text_quote(name, quoted));
	if (session_is_busy(s))
		return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY,
					 "session %s is still %s; wait for its Finished signal", s->id,
					 session_state_to_string(s->state));
	*ret = format;
	return 0;
}

/* Export and ExportToFd (out_fd >= 0, taken over). */
static int session_export(Session *s, sd_bus_message *m, const char *name, int out_fd,
			  sd_bus_error *error)
{
	_cleanup_close_ int out = out_fd;
	ExportFormat format = EXPORT_FOLDED; /* set by export_request_format() when it succeeds */
	int r;

	r = export_request_format(s, name, &format, error);
	if (r < 0)
		return r;
	return session_export_reply(s->manager, m, &(const ExportRequest){
		.dir_fd = session_open_dir(s),
		.session_id = s->id,
		.session_error = s->error,
		.format = format,
		.out_fd = TAKE_FD(out),
	}, error);
}

static int method_export(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *name;
	int r;

	r = sd_bus_message_read(m, "s", &name);
	if (r < 0)
		return r;
	return session_export(userdata, m, name, -1, error);
}

static int method_export_to_fd(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *name;
	int fd, r;

	r = sd_bus_message_read(m, "sh", &name, &fd);
	if (r < 0)
		return r;
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	return session_export(userdata, m, name, fd, error);
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

const sd_bus_vtable session_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SESSION_PROPERTY_TABLE(BOTH_PROPERTY, NO_PROPERTY, BUS_PROPERTY)
	SD_BUS_METHOD("Stop", "", "", method_stop, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Export", SD_BUS_ARGS("s", format), SD_BUS_RESULT("ay", data),
				method_export, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ExportToFd", SD_BUS_ARGS("s", format, "h", fd), SD_BUS_NO_RESULT,
				method_export_to_fd, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ExportFilteredToFd",
				SD_BUS_ARGS("s", format, "a{sv}", filter, "h", fd), SD_BUS_NO_RESULT,
				session_method_export_filtered, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetMetrics", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json),
				method_get_metrics, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("Release", "", "", method_release, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("Finished", SD_BUS_ARGS("s", state), 0),
	SD_BUS_VTABLE_END
};
