/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "record.h"

/*
 * The text of profd's additions to a live run's record (per-stage and
 * per-state sample shares and hottest functions); *ret is NULL when the
 * record has none (not a live run). -ENOMEM.
 */
int render_live_text(const RunProfile *p, char **ret);
