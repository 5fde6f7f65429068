/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "manager.h"

/*
 * A method call answered later, from a worker's result or once a change is
 * durable: it keeps the message, and once counted it is one of the sender's
 * requests in flight (manager_request_begin()) until it is released.
 */
typedef struct ManagerCall {
	Manager *manager;
	sd_bus_message *message;
	uid_t uid;
	bool counted;
} ManagerCall;

/* Keep 'msg' to answer later. */
void manager_call_init(ManagerCall *c, Manager *m, sd_bus_message *msg);
/* Count it as one of its sender's requests; a bus error when that is over a limit. */
int manager_call_count(ManagerCall *c, sd_bus_error *error);
/*
 * End its request now, keeping the message: for a call whose answer counts a
 * request of its own (an export served after it was made).
 */
void manager_call_end_request(ManagerCall *c);
/* End its request if counted and drop the message; fine on a zeroed call. */
void manager_call_release(ManagerCall *c);
/* Answer it with the error 'name' and release it; nothing to do without a message. */
void manager_call_fail(ManagerCall *c, const char *name, const char *message);

/* The call, moved out of *c (left zeroed): whoever takes it releases it. */
static inline ManagerCall manager_call_take(ManagerCall *c)
{
	ManagerCall taken = *c;

	*c = (ManagerCall){};
	return taken;
}
