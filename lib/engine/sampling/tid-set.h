/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A set of thread ids: which threads a session has seen. An IdTable whose ids
 * are the tids themselves (no key array), so `count` is the set's size. A
 * zeroed TidSet is empty.
 */

#include <stdbool.h>
#include <stdint.h>

#include "id-table.h"

typedef IdTable TidSet;

/* 1 if added, 0 if already present, -EINVAL for tid 0 (never a target thread), -ENOMEM. */
int tid_set_add(TidSet *s, uint32_t tid);
bool tid_set_contains(const TidSet *s, uint32_t tid);
/* true if it was there. */
bool tid_set_remove(TidSet *s, uint32_t tid);
void tid_set_clear(TidSet *s);
