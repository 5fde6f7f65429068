/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A map from 64-bit keys to dense 32-bit ids (0, 1, 2, ... in insertion
 * order), for interning the composite keys the exports build: (parent,
 * function) fold nodes, pprof locations, functions and mappings.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cleanup.h"

typedef struct IdMap IdMap;

int id_map_new(uint32_t expected, IdMap **ret);
IdMap *id_map_free(IdMap *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(IdMap *, id_map_free);

/* Id of 'key', added with the next dense id when new; *ret_new says which. */
int id_map_intern(IdMap *m, uint64_t key, uint32_t *ret_id, bool *ret_new);
uint32_t id_map_size(const IdMap *m);

static inline uint64_t id_map_key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}
