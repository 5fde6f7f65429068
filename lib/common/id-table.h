/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * IdTable: the one hash table of the tree. Open addressing with linear
 * probing over 32-bit ids, at most half full, power-of-two sized. The table
 * holds only ids; the keys live in the caller's own array, indexed by id
 * (strings, frames, stack nodes, (key, id) pairs...), so an entry costs 8
 * bytes of table and growing copies no keys. Small keys can be their own ids
 * (thread ids: tid-set.c), any value but ID_TABLE_EMPTY.
 *
 * The caller gives two functions, which the compiler inlines into these
 * static inline ones: hash(userdata, id) of a stored id (to grow and remove)
 * and, for lookups, eq(userdata, id) against the key looked for.
 *
 *	uint32_t slot;
 *	r = id_table_reserve(&t, 1, hash, items);       // room for one more
 *	if (id_table_find(&t, hash_of_key, eq, &key, &slot))
 *		return t.slots[slot];                    // found
 *	id_table_insert(&t, slot, new_id);               // the empty slot find() left
 *
 * lib/common/id-table.h has no .c: every user compiles it in.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#define ID_TABLE_EMPTY UINT32_MAX
#define ID_TABLE_MIN_SLOTS 64U

typedef struct IdTable {
	uint32_t *slots; /* ID_TABLE_EMPTY marks an empty slot */
	uint32_t mask; /* slots - 1; 0 before init (a zeroed IdTable is empty: find needs slots) */
	uint32_t count;
} IdTable;

typedef uint64_t (*IdTableHashFn)(const void *userdata, uint32_t id);
typedef bool (*IdTableEqFn)(const void *userdata, uint32_t id);

static inline uint32_t *id_table_slots_new(uint32_t n)
{
	uint32_t *slots = malloc((size_t)n * sizeof(uint32_t));

	/* all bits set is ID_TABLE_EMPTY */
	if (slots)
		memset(slots, 0xff, (size_t)n * sizeof(uint32_t));
	return slots;
}

/* An empty table with room for 'expected' ids before it grows. */
static inline int id_table_init(IdTable *t, uint32_t expected)
{
	uint32_t n = ID_TABLE_MIN_SLOTS;

	while (n / 2 < expected) {
		if (n > UINT32_MAX / 4)
			return -E2BIG;
		n *= 2;
	}
	t->slots = id_table_slots_new(n);
	if (!t->slots)
		return -ENOMEM;
	t->mask = n - 1;
	t->count = 0;
	return 0;
}

static inline void id_table_done(IdTable *t)
{
	free(t->slots);
	*t = (IdTable){};
}

static inline uint32_t id_table_next(const IdTable *t, uint32_t slot)
{
	return (slot + 1) & t->mask;
}

/*
 * The userdata of an eq() that needs the caller's keys too: 'items' holds the keys of
 * the stored ids (the caller's array, or the struct that has it), 'key' is the key
 * looked for.
 */
typedef struct IdTableLookup {
	const void *items;
	const void *key;
} IdTableLookup;

/*
 * Look for the id that eq() accepts, probing from 'slot' (id_table_find():
 * from the key's hash). true: found, in *ret_slot. false: *ret_slot is the empty slot where it belongs (valid until
 * the table changes; reserve first when inserting).
 */
static inline bool id_table_find_from(const IdTable *t, uint32_t slot, IdTableEqFn eq,
				      const void *userdata, uint32_t *ret_slot)
{
	for (uint32_t id; (id = t->slots[slot]) != ID_TABLE_EMPTY; slot = id_table_next(t, slot))
		if (eq(userdata, id))
			break;
	*ret_slot = slot;
	return t->slots[slot] != ID_TABLE_EMPTY;
}

static inline bool id_table_find(const IdTable *t, uint64_t hash, IdTableEqFn eq,
				 const void *userdata, uint32_t *ret_slot)
{
	return id_table_find_from(t, (uint32_t)hash & t->mask, eq, userdata, ret_slot);
}

/*
 * A table may hold several ids under one key (a multimap): the next one
 * after a match at slot s is id_table_find_from(t, id_table_next(t, s), ...),
 * and a new one goes into id_table_empty_slot(t, hash).
 */
static inline uint32_t id_table_empty_slot(const IdTable *t, uint64_t hash)
{
	uint32_t slot = (uint32_t)hash & t->mask;

	while (t->slots[slot] != ID_TABLE_EMPTY)
		slot = id_table_next(t, slot);
	return slot;
}

/* Store id in the empty slot that id_table_find() gave. */
static inline void id_table_insert(IdTable *t, uint32_t slot, uint32_t id)
{
	t->slots[slot] = id;
	t->count++;
}

/*
 * Make room for 'more' ids, at most half full; rehashes with hash() when it
 * grows. A zeroed table is allocated here.
 */
static inline int id_table_reserve(IdTable *t, uint32_t more, IdTableHashFn hash,
				   const void *userdata)
{
	uint64_t want = (uint64_t)t->count + more;
	uint32_t n = t->mask + 1, *slots;

	if (!t->slots)
		return id_table_init(t, more);
	if (want * 2 <= n)
		return 0;
	while ((uint64_t)n < want * 2) {
		if (n > UINT32_MAX / 4)
			return -E2BIG;
		n *= 2;
	}
	slots = id_table_slots_new(n);
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i <= t->mask; i++) {
		uint32_t id = t->slots[i], s;

		if (id == ID_TABLE_EMPTY)
			continue;
		for (s = (uint32_t)hash(userdata, id) & (n - 1); slots[s] != ID_TABLE_EMPTY;
		     s = (s + 1) & (n - 1))
			;
		slots[s] = id;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = n - 1;
	return 0;
}

/*
 * Forget every id and put back ids 0 .. n-1 (all fit: the table already held
 * them), for when the keys behind the ids changed and so did their hashes.
 */
static inline void id_table_rebuild(IdTable *t, uint32_t n, IdTableHashFn hash,
				    const void *userdata)
{
	memset(t->slots, 0xff, ((size_t)t->mask + 1) * sizeof(uint32_t));
	t->count = 0;
	for (uint32_t id = 0; id < n; id++)
		id_table_insert(t, id_table_empty_slot(t, hash(userdata, id)), id);
}

/*
 * Remove the id at 'slot' (from id_table_find()). Later ids of its probe run
 * move back into the gap (no tombstones), so lookups stay as short as if it
 * had never been there.
 */
static inline void id_table_remove(IdTable *t, uint32_t slot, IdTableHashFn hash,
				   const void *userdata)
{
	uint32_t gap = slot;

	for (uint32_t s = id_table_next(t, gap); t->slots[s] != ID_TABLE_EMPTY;
	     s = id_table_next(t, s)) {
		uint32_t home = (uint32_t)hash(userdata, t->slots[s]) & t->mask;

		/* move it unless its home lies cyclically in (gap, s] */
		if (gap <= s ? (home <= gap || home > s) : (home <= gap && home > s)) {
			t->slots[gap] = t->slots[s];
			gap = s;
		}
	}
	t->slots[gap] = ID_TABLE_EMPTY;
	t->count--;
}

/*
 * The common case: ids that stand for 64-bit keys (pids, addresses, packed
 * pairs), hashed with hash_finalize(). The caller gives one function,
 * key(userdata, id), the key of a stored id; these wrap it into the hash and
 * eq functions above (inlined like them).
 */
typedef uint64_t (*IdTableKeyFn)(const void *userdata, uint32_t id);

typedef struct IdTableKey {
	IdTableKeyFn key;
	const void *userdata;
	uint64_t value; /* the key looked for */
} IdTableKey;

static inline uint64_t id_table_key_hash(const void *userdata, uint32_t id)
{
	const IdTableKey *k = userdata;

	return hash_finalize(k->key(k->userdata, id));
}

static inline bool id_table_key_equal(const void *userdata, uint32_t id)
{
	const IdTableKey *k = userdata;

	return k->key(k->userdata, id) == k->value;
}

/* id_table_find() of 'value'; false on a zeroed table too. */
static inline bool id_table_find_key(const IdTable *t, uint64_t value, IdTableKeyFn key,
				     const void *userdata, uint32_t *ret_slot)
{
	const IdTableKey k = { key, userdata, value };

	return t->slots && id_table_find(t, hash_finalize(value), id_table_key_equal, &k, ret_slot);
}

/* The empty slot where 'value' goes (not in the table; reserve first). */
static inline uint32_t id_table_empty_slot_key(const IdTable *t, uint64_t value)
{
	return id_table_empty_slot(t, hash_finalize(value));
}

static inline int id_table_reserve_keys(IdTable *t, uint32_t more, IdTableKeyFn key,
					const void *userdata)
{
	const IdTableKey k = { key, userdata, 0 };

	return id_table_reserve(t, more, id_table_key_hash, &k);
}

static inline void id_table_remove_key(IdTable *t, uint32_t slot, IdTableKeyFn key,
				       const void *userdata)
{
	const IdTableKey k = { key, userdata, 0 };

	id_table_remove(t, slot, id_table_key_hash, &k);
}
