/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * A least-recently-used order: an intrusive doubly linked list, the link
 * inside each item, so keeping, touching and forgetting an item never
 * allocate. The list does not know whether an item is on it; its owner does
 * (a kept record, an unpinned module) and adds or removes it accordingly.
 * Not locked.
 */

typedef struct LruLink {
	struct LruLink *newer, *older;
} LruLink;

typedef struct LruList {
	LruLink *newest, *oldest; /* NULL when empty */
} LruList;

/* 'e', not on the list, becomes the most recently used. */
static inline void lru_add(LruList *l, LruLink *e)
{
	e->older = l->newest;
	e->newer = NULL;
	if (l->newest)
		l->newest->newer = e;
	else
		l->oldest = e;
	l->newest = e;
}

/* 'e', on the list, leaves it. */
static inline void lru_remove(LruList *l, LruLink *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		l->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		l->oldest = e->newer;
	e->newer = e->older = NULL;
}

/* 'e', on the list, becomes the most recently used. */
static inline void lru_touch(LruList *l, LruLink *e)
{
	lru_remove(l, e);
	lru_add(l, e);
}

static inline void *lru_item(LruLink *e, size_t offset)
{
	return e ? (char *)e - offset : NULL;
}

/* The least recently used item of 'type' (linked by its 'member'), NULL when empty. */
#define LRU_OLDEST(list, type, member) ((type *)lru_item((list)->oldest, offsetof(type, member)))
