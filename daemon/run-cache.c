/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "run-cache.h"

void run_cache_drop(RunCache *c, RunCacheEntry *e)
{
	if (!e->json)
		return;
	lru_remove(&c->use_order, &e->use);
	c->bytes -= e->size;
	free(e->json);
	e->json = NULL;
	e->size = 0;
}

void run_cache_put(RunCache *c, RunCacheEntry *e, char *json, size_t size)
{
	char *shrunk;

	run_cache_drop(c, e);
	if (size > c->budget / 8) {
		free(json);
		return;
	}
	while (c->bytes + size > c->budget)
		run_cache_drop(c, LRU_OLDEST(&c->use_order, RunCacheEntry, use));
	/* hold no more than is counted: a serialiser's buffer may be twice its record */
	shrunk = realloc(json, size + 1);
	e->json = shrunk ?: json;
	e->size = size;
	c->bytes += size;
	lru_add(&c->use_order, &e->use);
}

const char *run_cache_get(RunCache *c, RunCacheEntry *e)
{
	if (!e->json)
		return NULL;
	lru_touch(&c->use_order, &e->use);
	return e->json;
}
