/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "manager-call.h"

void manager_call_init(ManagerCall *c, Manager *m, sd_bus_message *msg)
{
	*c = (ManagerCall){ .manager = m, .message = sd_bus_message_ref(msg) };
}

int manager_call_count(ManagerCall *c, sd_bus_error *error)
{
	int r = manager_request_begin(c->manager, c->message, &c->uid, error);

	c->counted = r >= 0;
	return r;
}

void manager_call_end_request(ManagerCall *c)
{
	if (c->counted)
		manager_request_end(c->manager, c->uid);
	c->counted = false;
}

void manager_call_release(ManagerCall *c)
{
	manager_call_end_request(c);
	c->message = sd_bus_message_unref(c->message);
}

void manager_call_fail(ManagerCall *c, const char *name, const char *message)
{
	if (!c->message)
		return;
	(void)sd_bus_reply_method_errorf(c->message, name, "%s", message);
	manager_call_release(c);
}
