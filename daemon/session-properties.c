/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-properties.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Written as numbers in the file and on the bus: the kernel's are 32 bits wide. */
_Static_assert(sizeof(uid_t) == sizeof(uint32_t) && sizeof(pid_t) == sizeof(uint32_t),
	       "uid_t and pid_t are read as uint32_t");

static const char *const session_state_names[_SESSION_STATE_MAX] = {
	[SESSION_SAMPLING] = "sampling",
	[SESSION_RESOLVING] = "resolving",
	[SESSION_COMPLETED] = "completed",
	[SESSION_FAILED] = "failed",
};

const char *session_state_to_string(SessionState s)
{
	return s >= 0 && s < _SESSION_STATE_MAX ? session_state_names[s] : NULL;
}

int session_state_from_string(const char *s)
{
	for (int i = 0; i < _SESSION_STATE_MAX; i++)
		if (strcmp(s, session_state_names[i]) == 0)
			return i;
	return -EINVAL;
}

void session_properties_done(SessionProperties *p)
{
	free(p->target);
	free(p->backend);
	free(p->event);
	free(p->run_id);
	free(p->error);
	p->target = p->backend = p->event = p->run_id = p->error = NULL;
}

int session_properties_set_string(char **field, const char *s)
{
	char *c = s && *s ? strdup(s) : NULL;

	if (s && *s && !c)
		return -ENOMEM;
	free(*field);
	*field = c;
	return 0;
}

int session_properties_copy(const SessionProperties *p, SessionProperties *ret)
{
	SessionProperties c = *p;

	c.target = c.backend = c.event = c.run_id = c.error = NULL;
	if (session_properties_set_string(&c.target, p->target) < 0 ||
	    session_properties_set_string(&c.backend, p->backend) < 0 ||
	    session_properties_set_string(&c.event, p->event) < 0 ||
	    session_properties_set_string(&c.run_id, p->run_id) < 0 ||
	    session_properties_set_string(&c.error, p->error) < 0) {
		session_properties_done(&c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void session_properties_update_duration(SessionProperties *p)
{
	p->duration_usec = (p->state == SESSION_SAMPLING ? p->effective_duration_nanos
							 : p->duration_nanos) / 1000;
}
