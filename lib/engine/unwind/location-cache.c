/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "location-cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "hash.h"

typedef struct Slot {
	uint64_t addr; /* 0: empty (address 0 is never code) */
	uint32_t first, n;
} Slot;

/* Not an IdTable: naming's hot path compares the address in the slot (BENCHMARKS.md). */
struct LocationCache {
	Slot *slots;
	size_t mask, count;
	uint32_t *ids; /* the frame id lists, back to back */
	size_t n_ids, ids_allocated;
};

static size_t slot_of(const LocationCache *c, uint64_t addr)
{
	return hash_finalize(addr) & c->mask;
}

LocationCache *location_cache_free(LocationCache *c)
{
	if (!c)
		return NULL;
	free(c->slots);
	free(c->ids);
	free(c);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(LocationCache *, location_cache_free);

int location_cache_new(LocationCache **ret)
{
	_cleanup_(location_cache_freep) LocationCache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->mask = 4095;
	c->slots = calloc(c->mask + 1, sizeof(Slot));
	if (!c->slots)
		return -ENOMEM;
	*ret = TAKE_PTR(c);
	return 0;
}

void location_cache_clear(LocationCache *c)
{
	memset(c->slots, 0, (c->mask + 1) * sizeof(Slot));
	c->count = 0;
	c->n_ids = 0;
}

bool location_cache_get(const LocationCache *c, uint64_t addr, const uint32_t **ret_ids,
			uint32_t *ret_n)
{
	for (size_t i = slot_of(c, addr); c->slots[i].addr; i = (i + 1) & c->mask)
		if (c->slots[i].addr == addr) {
			*ret_ids = c->ids + c->slots[i].first;
			*ret_n = c->slots[i].n;
			return true;
		}
	return false;
}

static int grow_slots(LocationCache *c)
{
	Slot *old = c->slots;
	size_t old_mask = c->mask;

	if ((c->count + 1) * 2 <= c->mask + 1)
		return 0;
	c->slots = calloc((old_mask + 1) * 2, sizeof(Slot));
	if (!c->slots) {
		c->slots = old;
		return -ENOMEM;
	}
	c->mask = old_mask * 2 + 1;
	for (size_t i = 0; i <= old_mask; i++) {
		size_t j;

		if (!old[i].addr)
			continue;
		for (j = slot_of(c, old[i].addr); c->slots[j].addr; j = (j + 1) & c->mask)
			;
		c->slots[j] = old[i];
	}
	free(old);
	return 0;
}

int location_cache_put(LocationCache *c, uint64_t addr, const uint32_t *ids, uint32_t n)
{
	size_t i;
	int r;

	if (addr == 0)
		return 0;
	r = grow_slots(c);
	if (r < 0)
		return r;
	r = ARRAY_RESERVE(c->ids, c->ids_allocated, c->n_ids + n, 16384);
	if (r < 0)
		return r;
	for (i = slot_of(c, addr); c->slots[i].addr; i = (i + 1) & c->mask)
		if (c->slots[i].addr == addr)
			return 0;
	memcpy(c->ids + c->n_ids, ids, n * sizeof(uint32_t));
	c->slots[i] = (Slot){ .addr = addr, .first = (uint32_t)c->n_ids, .n = n };
	c->n_ids += n;
	c->count++;
	return 0;
}
