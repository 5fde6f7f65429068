/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Copy a file into a client's pipe or socket from the event loop, a few
 * pages whenever the client has made room, so a slow or stalled reader costs
 * neither a thread nor anybody else's time. A reader that takes nothing for
 * EXPORT_STREAM_STALL_USEC is given up on.
 */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#define EXPORT_STREAM_STALL_USEC (30ULL * 1000000ULL)

/*
 * Take over 'in' (the file) and 'out' (the client's descriptor) and answer
 * 'm' with an empty reply once everything was written, or with an error.
 * On failure to start both descriptors are closed.
 */
int export_stream_start(sd_event *event, sd_bus_message *m, int in, int out);

/* Answer every stream still in progress with an error and free it (at exit). */
void export_stream_cancel_all(void);
