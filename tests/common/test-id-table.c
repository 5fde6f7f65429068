/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * IdTable (lib/common/id-table.h) against a plain model: ids of 64-bit keys
 * inserted, found, grown and removed in random order, with a good hash and
 * with a hash that puts every key into a handful of runs that wrap around the
 * table's end (the hard case for removal by backward shift).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "id-table.h"
#include "test-util.h"

#define N 20000

typedef struct Keys {
	uint64_t key[N];
	bool present[N]; /* the model: which ids are in the table */
	bool weak;       /* the colliding hash */
} Keys;

static Keys keys;

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* weak: 8 homes, all in the last slots of any table of 64 or more */
static uint64_t key_hash(uint64_t key)
{
	return keys.weak ? UINT64_MAX - (key % 8) : mix(key);
}

static uint64_t hash_id(const void *userdata, uint32_t id)
{
	const Keys *k = userdata;

	return key_hash(k->key[id]);
}

typedef struct Lookup {
	const Keys *keys;
	uint64_t key;
} Lookup;

static bool equal_id(const void *userdata, uint32_t id)
{
	const Lookup *l = userdata;

	return l->keys->key[id] == l->key;
}

static bool find(const IdTable *t, uint64_t key, uint32_t *ret_slot)
{
	return id_table_find(t, key_hash(key), equal_id, &(Lookup){ &keys, key }, ret_slot);
}

/* Every id the model has is found, and nothing else. */
static void check_model(const IdTable *t, uint32_t n, const char *when)
{
	uint32_t count = 0, slot;

	for (uint32_t id = 0; id < n; id++) {
		bool found = find(t, keys.key[id], &slot);

		CHECK(found == keys.present[id] && (!found || t->slots[slot] == id),
		      "%s: id %u %s but the table %s it", when, id,
		      keys.present[id] ? "is present" : "was removed", found ? "finds" : "misses");
		count += keys.present[id];
	}
	CHECK(t->count == count, "%s: count %u, expected %u", when, t->count, count);
	CHECK(t->count * 2 <= t->mask + 1, "%s: more than half full (%u of %u)", when, t->count,
	      t->mask + 1);
}

static void run(bool weak, uint32_t n)
{
	IdTable t = {};
	uint32_t slot;
	const char *what = weak ? "colliding hash" : "good hash";

	keys.weak = weak;
	memset(keys.present, 0, sizeof(keys.present));
	CHECK(id_table_init(&t, 0) == 0 && t.mask + 1 == ID_TABLE_MIN_SLOTS, "init");
	for (uint32_t id = 0; id < n; id++) {
		keys.key[id] = mix(id + 1) ^ (weak ? 0 : 0x5555);
		CHECK(id_table_reserve(&t, 1, hash_id, &keys) == 0, "reserve");
		CHECK(!find(&t, keys.key[id], &slot), "%s: key %u found before insertion", what, id);
		id_table_insert(&t, slot, id);
		keys.present[id] = true;
	}
	check_model(&t, n, weak ? "after inserting (colliding)" : "after inserting");

	/* remove every third, then every other remaining one, in a scattered order */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < n; i++) {
			uint32_t id = (uint32_t)(mix(i + 77u * (uint32_t)pass) % n);

			if (!keys.present[id] || id % (uint32_t)(3 - pass) != 0)
				continue;
			CHECK(find(&t, keys.key[id], &slot), "%s: id %u lost before removal", what, id);
			id_table_remove(&t, slot, hash_id, &keys);
			keys.present[id] = false;
		}
	check_model(&t, n, weak ? "after removing (colliding)" : "after removing");

	/* removed keys come back with new slots */
	for (uint32_t id = 0; id < n; id += 5)
		if (!keys.present[id]) {
			CHECK(id_table_reserve(&t, 1, hash_id, &keys) == 0 &&
				      !find(&t, keys.key[id], &slot),
			      "%s: removed id %u still found", what, id);
			id_table_insert(&t, slot, id);
			keys.present[id] = true;
		}
	check_model(&t, n, weak ? "after reinserting (colliding)" : "after reinserting");
	id_table_done(&t);
	CHECK(!t.slots && t.count == 0, "done leaves a zeroed table");
}

/* Keys that change behind their ids: a rebuild finds them by their new keys. */
static void test_rebuild(void)
{
	IdTable t = {};
	uint32_t slot, n = 3000;

	keys.weak = false;
	CHECK(id_table_init(&t, n) == 0, "init");
	for (uint32_t id = 0; id < n; id++) {
		keys.key[id] = mix(id + 5);
		keys.present[id] = true;
		CHECK(!find(&t, keys.key[id], &slot), "key %u found before insertion", id);
		id_table_insert(&t, slot, id);
	}
	for (uint32_t id = 0; id < n; id += 3)
		keys.key[id] = mix(id + 5) ^ 0xabcdef;
	id_table_rebuild(&t, n, hash_id, &keys);
	check_model(&t, n, "after a rebuild with changed keys");
	id_table_done(&t);
}

static void test_sizes(void)
{
	IdTable t = {};

	CHECK(id_table_init(&t, 1000) == 0 && t.mask + 1 == 2048, "room for 1000: %u slots",
	      t.mask + 1);
	CHECK(id_table_reserve(&t, 1024, hash_id, &keys) == 0 && t.mask + 1 == 2048,
	      "1024 fit in 2048 slots, got %u", t.mask + 1);
	CHECK(id_table_reserve(&t, 1025, hash_id, &keys) == 0 && t.mask + 1 == 4096,
	      "1025 need 4096 slots, got %u", t.mask + 1);
	id_table_done(&t);
	CHECK(id_table_init(&t, UINT32_MAX) == -E2BIG, "a table for 2^32 ids is refused");
	id_table_done(&t);
	/* a zeroed table is allocated by its first reserve */
	CHECK(id_table_reserve(&t, 100, hash_id, &keys) == 0 && t.mask + 1 == 256 && t.count == 0,
	      "reserve on a zeroed table: %u slots", t.mask + 1);
	id_table_done(&t);
}

int main(void)
{
	run(false, N);
	/* the colliding hash makes every lookup linear: fewer keys */
	run(true, 2000);
	test_rebuild();
	test_sizes();
	return test_result();
}
