/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "run-cache.h"

static void unlink_entry(RunCache *c, RunCacheEntry *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		c->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		c->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void link_newest(RunCache *c, RunCacheEntry *e)
{
	e->older = c->newest;
	e->newer = NULL;
	if (c->newest)
		c->newest->newer = e;
	else
		c->oldest = e;
	c->newest = e;
}

void run_cache_drop(RunCache *c, RunCacheEntry *e)
{
	if (!e->json)
		return;
	unlink_entry(c, e);
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
		run_cache_drop(c, c->oldest);
	/* hold no more than is counted: a serialiser's buffer may be twice its record */
	shrunk = realloc(json, size + 1);
	e->json = shrunk ?: json;
	e->size = size;
	c->bytes += size;
	link_newest(c, e);
}

const char *run_cache_get(RunCache *c, RunCacheEntry *e)
{
	if (!e->json)
		return NULL;
	unlink_entry(c, e);
	link_newest(c, e);
	return e->json;
}
