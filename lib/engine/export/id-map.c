/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "id-map.h"

#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "hash.h"

/* Open addressing over (key, id) pairs, load factor at most one half. */
typedef struct IdMapSlot {
	uint64_t key;
	uint32_t id; /* UINT32_MAX marks an empty slot */
} IdMapSlot;

struct IdMap {
	IdMapSlot *slots;
	uint64_t mask;
	uint32_t count;
};

static IdMapSlot *slots_new(uint64_t n)
{
	IdMapSlot *s = malloc(n * sizeof(IdMapSlot));

	if (!s)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		s[i].id = UINT32_MAX;
	return s;
}

int id_map_new(uint32_t expected, IdMap **ret)
{
	_cleanup_free_ IdMap *m = calloc(1, sizeof(*m));
	uint64_t n = 64;

	if (!m)
		return -ENOMEM;
	while (n < (uint64_t)expected * 2)
		n *= 2;
	m->slots = slots_new(n);
	if (!m->slots)
		return -ENOMEM;
	m->mask = n - 1;
	*ret = TAKE_PTR(m);
	return 0;
}

IdMap *id_map_free(IdMap *m)
{
	if (!m)
		return NULL;
	free(m->slots);
	free(m);
	return NULL;
}

void id_map_freep(IdMap **m)
{
	id_map_free(*m);
}

static int grow(IdMap *m)
{
	uint64_t n = (m->mask + 1) * 2;
	IdMapSlot *slots = slots_new(n);

	if (!slots)
		return -ENOMEM;
	for (uint64_t i = 0; i <= m->mask; i++) {
		uint64_t s;

		if (m->slots[i].id == UINT32_MAX)
			continue;
		for (s = hash_finalize(m->slots[i].key) & (n - 1); slots[s].id != UINT32_MAX;
		     s = (s + 1) & (n - 1))
			;
		slots[s] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->mask = n - 1;
	return 0;
}

int id_map_intern(IdMap *m, uint64_t key, uint32_t *ret_id, bool *ret_new)
{
	uint64_t s;
	int r;

	if ((uint64_t)(m->count + 1) * 2 > m->mask + 1) {
		if (m->count >= UINT32_MAX - 1)
			return -E2BIG;
		r = grow(m);
		if (r < 0)
			return r;
	}
	for (s = hash_finalize(key) & m->mask; m->slots[s].id != UINT32_MAX; s = (s + 1) & m->mask)
		if (m->slots[s].key == key) {
			*ret_id = m->slots[s].id;
			if (ret_new)
				*ret_new = false;
			return 0;
		}
	m->slots[s] = (IdMapSlot){ .key = key, .id = m->count };
	*ret_id = m->count++;
	if (ret_new)
		*ret_new = true;
	return 0;
}

uint32_t id_map_size(const IdMap *m)
{
	return m->count;
}
