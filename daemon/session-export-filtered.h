/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "session.h"

/*
 * ExportFilteredToFd(s format, a{sv} filter, h fd): a profile format of the
 * samples of one stage and/or macro state of a finished live run (filter keys
 * "stage", "state"; names as in keyhog-profile-v1). userdata is the Session.
 */
int session_method_export_filtered(sd_bus_message *msg, void *userdata, sd_bus_error *error);
