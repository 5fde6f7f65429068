/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LruList (lib/common/lru.h) against a plain model: items added, touched
 * and removed in random order, the list walked both ways after each step,
 * and LRU_OLDEST finding the item around a link that is not its first member.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lru.h"
#include "test-util.h"

#define N_ITEMS 9
#define N_STEPS 20000

typedef struct Item {
	unsigned id;
	LruLink use; /* not first: LRU_OLDEST must undo the offset */
} Item;

static Item items[N_ITEMS];
static unsigned order[N_ITEMS]; /* the model: ids on the list, oldest first */
static size_t n_order;

static void model_remove(unsigned id)
{
	size_t i = 0;

	while (order[i] != id)
		i++;
	for (; i + 1 < n_order; i++)
		order[i] = order[i + 1];
	n_order--;
}

static bool model_has(unsigned id)
{
	for (size_t i = 0; i < n_order; i++)
		if (order[i] == id)
			return true;
	return false;
}

/* The list, walked from the oldest by 'newer' and back by 'older', is the model. */
static void check_order(LruList *l, unsigned step)
{
	Item *oldest = LRU_OLDEST(l, Item, use);
	LruLink *e = l->oldest;
	size_t i = 0;

	CHECK(n_order ? oldest == &items[order[0]] : !oldest && !l->newest,
	      "step %u: the oldest is the model's", step);
	for (; e && i < n_order; e = e->newer, i++)
		CHECK(e == &items[order[i]].use, "step %u: item %zu from the oldest is the model's",
		      step, i);
	CHECK(!e && i == n_order, "step %u: %zu items from the oldest, model %zu", step, i, n_order);
	for (e = l->newest, i = n_order; e && i > 0; e = e->older)
		CHECK(e == &items[order[--i]].use,
		      "step %u: item %zu from the newest is the model's", step, i);
	CHECK(!e && i == 0, "step %u: walking back from the newest ends at the oldest", step);
}

static void test_small(void)
{
	LruList l = { 0 };

	for (unsigned i = 0; i < 3; i++)
		items[i].id = i;
	CHECK(!LRU_OLDEST(&l, Item, use), "an empty list has no oldest");
	lru_add(&l, &items[0].use);
	lru_add(&l, &items[1].use);
	lru_add(&l, &items[2].use);
	CHECK(LRU_OLDEST(&l, Item, use)->id == 0, "the first added is the oldest");
	lru_touch(&l, &items[0].use);
	CHECK(LRU_OLDEST(&l, Item, use)->id == 1, "a touched item is no longer the oldest");
	CHECK(l.newest == &items[0].use, "a touched item is the newest");
	lru_remove(&l, &items[1].use);
	CHECK(LRU_OLDEST(&l, Item, use)->id == 2, "removing the oldest makes the next one oldest");
	CHECK(!items[1].use.newer && !items[1].use.older, "a removed item links to nothing");
	lru_remove(&l, &items[0].use);
	lru_remove(&l, &items[2].use);
	CHECK(!l.oldest && !l.newest, "removing every item empties the list");
}

static void test_model(void)
{
	LruList l = { 0 };
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	n_order = 0;
	for (unsigned i = 0; i < N_ITEMS; i++)
		items[i] = (Item){ .id = i };
	for (unsigned step = 0; step < N_STEPS; step++) {
		unsigned id;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		id = (unsigned)(x % N_ITEMS);
		if (!model_has(id)) {
			lru_add(&l, &items[id].use);
			order[n_order++] = id;
		} else if ((x >> 32) & 1) {
			lru_touch(&l, &items[id].use);
			model_remove(id);
			order[n_order++] = id;
		} else {
			lru_remove(&l, &items[id].use);
			model_remove(id);
		}
		check_order(&l, step);
	}
}

int main(void)
{
	test_small();
	test_model();
	return test_result();
}
