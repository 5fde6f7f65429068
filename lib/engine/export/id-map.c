/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "id-map.h"

#include <errno.h>
#include <stdlib.h>

#include "array.h"
#include "cleanup.h"
#include "hash.h"
#include "id-table.h"

/* The keys in id order; the IdTable finds a key's id. */
struct IdMap {
	IdTable table;
	uint64_t *keys;
	uint32_t allocated;
};

typedef struct IdMapKey {
	const IdMap *map;
	uint64_t key;
} IdMapKey;

static uint64_t hash_id(const void *userdata, uint32_t id)
{
	const IdMap *m = userdata;

	return hash_finalize(m->keys[id]);
}

static bool key_equal(const void *userdata, uint32_t id)
{
	const IdMapKey *k = userdata;

	return k->map->keys[id] == k->key;
}

int id_map_new(uint32_t expected, IdMap **ret)
{
	_cleanup_(id_map_freep) IdMap *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	r = id_table_init(&m->table, expected);
	if (r < 0)
		return r;
	m->allocated = expected > 16 ? expected : 16;
	m->keys = malloc((size_t)m->allocated * sizeof(uint64_t));
	if (!m->keys)
		return -ENOMEM;
	*ret = TAKE_PTR(m);
	return 0;
}

IdMap *id_map_free(IdMap *m)
{
	if (!m)
		return NULL;
	id_table_done(&m->table);
	free(m->keys);
	free(m);
	return NULL;
}

int id_map_intern(IdMap *m, uint64_t key, uint32_t *ret_id, bool *ret_new)
{
	uint32_t slot, id = m->table.count;
	int r;

	r = id_table_reserve(&m->table, 1, hash_id, m);
	if (r < 0)
		return r;
	if (id_table_find(&m->table, hash_finalize(key), key_equal, &(IdMapKey){ m, key }, &slot)) {
		*ret_id = m->table.slots[slot];
		if (ret_new)
			*ret_new = false;
		return 0;
	}
	r = ARRAY_RESERVE_U32(m->keys, m->allocated, (size_t)id + 1, 16);
	if (r < 0)
		return r;
	m->keys[id] = key;
	id_table_insert(&m->table, slot, id);
	*ret_id = id;
	if (ret_new)
		*ret_new = true;
	return 0;
}

uint32_t id_map_size(const IdMap *m)
{
	return m->table.count;
}
