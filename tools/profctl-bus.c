/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Connecting to profd and calling it, with errors a person can act on. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bus-address.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "profctl-bus.h"


int profctl_log_bus_error(const char *what, const sd_bus_error *error, int r)
{
	if (error && sd_bus_error_is_set(error))
		fprintf(stderr, "profctl: %s: %s\n", what, error->message ? error->message : error->name);
	else
		fprintf(stderr, "profctl: %s: %s\n", what, strerror(-r));
	return r;
}

static const char *transport_name(const ProfctlContext *ctx)
{
	switch (ctx->transport) {
	case PROFCTL_USER_BUS:
		return "the user bus";
	case PROFCTL_ADDRESS:
		return ctx->address;
	default:
		return "the system bus";
	}
}

static void hint_start(const ProfctlContext *ctx, const char *why)
{
	const char *start = ctx->transport == PROFCTL_SYSTEM_BUS ? "systemctl start profd" :
			    ctx->transport == PROFCTL_USER_BUS ? "profd --bus=user" :
								 "profd --address=ADDR";

	fprintf(stderr, "profctl: cannot reach profd on %s: %s; start it with '%s' or use --local\n",
		transport_name(ctx), why, start);
}

int profctl_bus_open(const ProfctlContext *ctx, sd_bus **ret)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	(void)bus_errors_register();
	switch (ctx->transport) {
	case PROFCTL_USER_BUS:
		r = sd_bus_open_user(&bus);
		break;
	case PROFCTL_ADDRESS:
		r = bus_open_address(ctx->address, true, &bus);
		break;
	default:
		r = sd_bus_open_system(&bus);
		break;
	}
	if (r < 0) {
		hint_start(ctx, strerror(-r));
		return r;
	}

	/*
	 * Fail now, with a hint, rather than at the first call with a bus error.
	 * A ping, not a name owner check: it starts profd by bus activation when
	 * it is installed but not running.
	 */
	r = sd_bus_call_method(bus, PROFD_BUS_NAME, "/", "org.freedesktop.DBus.Peer", "Ping", &error,
			       NULL, NULL);
	if (r < 0) {
		hint_start(ctx, sd_bus_error_has_name(&error, SD_BUS_ERROR_SERVICE_UNKNOWN) ?
					"the name " PROFD_BUS_NAME " has no owner" :
					error.message ?: strerror(-r));
		return r;
	}
	*ret = TAKE_PTR(bus);
	return 0;
}

int profctl_call_manager(sd_bus *bus, const char *what, const char *method, sd_bus_message **ret_reply,
			 const char *types, ...)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	va_list ap;
	int r;

	va_start(ap, types);
	r = sd_bus_call_methodv(bus, PROFD_BUS_NAME, PROFD_MANAGER_PATH, PROFD_MANAGER_INTERFACE, method,
				&error, ret_reply, types, ap);
	va_end(ap);
	if (r < 0)
		profctl_log_bus_error(what, &error, r);
	sd_bus_error_free(&error);
	return r;
}

int profctl_session_path(const char *id, char **ret)
{
	char *path;

	if (!*id || strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(id))
		return -EINVAL;
	if (asprintf(&path, PROFD_SESSION_PATH_PREFIX "%s", id) < 0)
		return -ENOMEM;
	*ret = path;
	return 0;
}
