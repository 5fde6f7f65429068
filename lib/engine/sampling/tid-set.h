/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A set of thread ids (open addressing): which threads a session has seen. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct TidSet {
	uint32_t *slots; /* 0 marks an empty slot; tid 0 is never a target thread */
	size_t mask, count;
} TidSet;

/* 1 if added, 0 if already present, -ENOMEM. */
int tid_set_add(TidSet *s, uint32_t tid);
bool tid_set_contains(const TidSet *s, uint32_t tid);
void tid_set_clear(TidSet *s);
