/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Stored records' compact JSON kept in memory up to a byte budget, so that
 * GetRun of a recently stored or read run is answered on the bus thread
 * without a file read on a worker. Least recently used goes first; a record
 * over an eighth of the budget is never kept, so one big record cannot push
 * out all the small ones. An entry lives inside its run (StoredRun): the run
 * store drops it whenever the run is hidden or forgotten, so only a run
 * found for its caller is ever answered from here. Event loop only.
 */

#include <stddef.h>
#include <stdint.h>

#include "lru.h"

typedef struct RunCacheEntry {
	LruLink use; /* in the use order while kept */
	char *json;  /* NULL when not kept */
	size_t size; /* bytes of json */
} RunCacheEntry;

typedef struct RunCache {
	LruList use_order;
	uint64_t bytes;  /* of the JSON kept */
	uint64_t budget; /* 0: nothing is kept */
} RunCache;

/* Keep 'json' of 'size' bytes (taken over, freed if not kept) in 'e', the most recently used. */
void run_cache_put(RunCache *c, RunCacheEntry *e, char *json, size_t size);
/* The JSON kept in 'e', now the most recently used; NULL when not kept. */
const char *run_cache_get(RunCache *c, RunCacheEntry *e);
/* Forget what 'e' keeps, if anything. */
void run_cache_drop(RunCache *c, RunCacheEntry *e);
