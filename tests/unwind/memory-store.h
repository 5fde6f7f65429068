/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A SymbolCacheStore in memory: one saved file, as the daemon's directory would keep it. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol-cache.h"

typedef struct MemoryStore {
	char name[SYMBOL_FILE_NAME_MAX];
	uint32_t scope; /* of the file saved */
	void *data;
	size_t size;
	unsigned loads, saves; /* loads: every attempt, found or not */
} MemoryStore;

static inline int memory_load(void *userdata, const ModuleIdentity *id, const char *name,
			      void **ret_data, size_t *ret_size)
{
	MemoryStore *s = userdata;

	s->loads++;
	if (!s->data || strcmp(name, s->name) != 0)
		return -ENOENT;
	*ret_data = malloc(s->size);
	if (!*ret_data)
		return -ENOMEM;
	memcpy(*ret_data, s->data, s->size);
	*ret_size = s->size;
	return 0;
}

static inline int memory_save(void *userdata, const ModuleIdentity *id, const char *name,
			      const void *data, size_t size)
{
	MemoryStore *s = userdata;

	free(s->data);
	s->data = malloc(size);
	if (!s->data)
		return -ENOMEM;
	memcpy(s->data, data, size);
	s->size = size;
	s->scope = id->scope;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->saves++;
	return 0;
}
