/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "symbol-cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "hash.h"

/* Bump allocator: entries never move and are freed all at once with the cache. */
typedef struct ArenaBlock {
	struct ArenaBlock *next;
	size_t used, size;
	max_align_t data[];
} ArenaBlock;

#define ARENA_BLOCK_SIZE (256U * 1024U)

typedef struct Location {
	const char *key; /* NULL: empty slot */
	uint64_t address;
	const SymbolFrame *frames;
	size_t n_frames;
} Location;

struct SymbolCache {
	pthread_mutex_t lock;
	ArenaBlock *arena;
	size_t arena_bytes;

	/* open addressing, load factor <= 1/2 */
	const char **strings;
	size_t strings_mask, n_strings;
	Location *locations;
	size_t locations_mask, n_locations;
	const char **modules;
	size_t modules_mask, n_modules;

	KernelSymbols *kernel;
	int kernel_error; /* loading failed once: do not re-read kallsyms per sample */
};

static uint64_t hash_location(const char *key, uint64_t address)
{
	return hash_combine((uint64_t)(uintptr_t)key, address);
}

static void *arena_alloc(SymbolCache *c, size_t size)
{
	ArenaBlock *b = c->arena;
	void *p;

	size = (size + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
	if (!b || b->size - b->used < size) {
		size_t block = size > ARENA_BLOCK_SIZE ? size : ARENA_BLOCK_SIZE;

		b = malloc(sizeof(ArenaBlock) + block);
		if (!b)
			return NULL;
		b->size = block;
		b->used = 0;
		b->next = c->arena;
		c->arena = b;
		c->arena_bytes += sizeof(ArenaBlock) + block;
	}
	p = (char *)b->data + b->used;
	b->used += size;
	return p;
}

static int table_new(void **slots, size_t *mask, size_t slot_size)
{
	*mask = 1023;
	*slots = calloc(*mask + 1, slot_size);
	return *slots ? 0 : -ENOMEM;
}

int symbol_cache_new(SymbolCache **ret)
{
	_cleanup_(symbol_cache_freep) SymbolCache *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	r = table_new((void **)&c->strings, &c->strings_mask, sizeof(char *));
	if (r < 0)
		return r;
	r = table_new((void **)&c->locations, &c->locations_mask, sizeof(Location));
	if (r < 0)
		return r;
	r = table_new((void **)&c->modules, &c->modules_mask, sizeof(char *));
	if (r < 0)
		return r;
	*ret = TAKE_PTR(c);
	return 0;
}

SymbolCache *symbol_cache_free(SymbolCache *c)
{
	if (!c)
		return NULL;
	while (c->arena) {
		ArenaBlock *next = c->arena->next;

		free(c->arena);
		c->arena = next;
	}
	free(c->strings);
	free(c->locations);
	free(c->modules);
	kernel_symbols_free(c->kernel);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

void symbol_cache_freep(SymbolCache **c)
{
	symbol_cache_free(*c);
}

/* Double a pointer set (strings, modules) keyed by a string hash or by identity. */
static int pointer_set_grow(const char ***slots, size_t *mask, size_t count, bool by_identity)
{
	size_t new_mask = *mask * 2 + 1;
	const char **n;

	if ((count + 1) * 2 <= *mask + 1)
		return 0;
	n = calloc(new_mask + 1, sizeof(char *));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i <= *mask; i++) {
		const char *s = (*slots)[i];
		size_t j;

		if (!s)
			continue;
		j = (by_identity ? hash_finalize((uintptr_t)s) : hash_string(0, s)) & new_mask;
		while (n[j])
			j = (j + 1) & new_mask;
		n[j] = s;
	}
	free(*slots);
	*slots = n;
	*mask = new_mask;
	return 0;
}

static int intern_locked(SymbolCache *c, const char *s, const char **ret)
{
	size_t j, len;
	char *copy;
	int r;

	r = pointer_set_grow(&c->strings, &c->strings_mask, c->n_strings, false);
	if (r < 0)
		return r;
	for (j = hash_string(0, s) & c->strings_mask; c->strings[j]; j = (j + 1) & c->strings_mask)
		if (strcmp(c->strings[j], s) == 0) {
			*ret = c->strings[j];
			return 0;
		}
	len = strlen(s);
	copy = arena_alloc(c, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len + 1);
	c->strings[j] = copy;
	c->n_strings++;
	*ret = copy;
	return 0;
}

int symbol_cache_intern(SymbolCache *c, const char *s, const char **ret)
{
	int r;

	pthread_mutex_lock(&c->lock);
	r = intern_locked(c, s, ret);
	pthread_mutex_unlock(&c->lock);
	return r;
}

static Location *location_slot(SymbolCache *c, const char *key, uint64_t address)
{
	size_t j;

	for (j = hash_location(key, address) & c->locations_mask; c->locations[j].key;
	     j = (j + 1) & c->locations_mask)
		if (c->locations[j].key == key && c->locations[j].address == address)
			break;
	return &c->locations[j];
}

bool symbol_cache_lookup(SymbolCache *c, const char *key, uint64_t address,
			 const SymbolFrame **ret_frames, size_t *ret_n)
{
	const Location *l;
	bool found;

	pthread_mutex_lock(&c->lock);
	l = location_slot(c, key, address);
	found = l->key != NULL;
	if (found) {
		*ret_frames = l->frames;
		*ret_n = l->n_frames;
	}
	pthread_mutex_unlock(&c->lock);
	return found;
}

static int locations_grow(SymbolCache *c)
{
	size_t old_mask = c->locations_mask;
	Location *old = c->locations;

	if ((c->n_locations + 1) * 2 <= old_mask + 1)
		return 0;
	c->locations = calloc((old_mask + 1) * 2, sizeof(Location));
	if (!c->locations) {
		c->locations = old;
		return -ENOMEM;
	}
	c->locations_mask = old_mask * 2 + 1;
	for (size_t i = 0; i <= old_mask; i++)
		if (old[i].key)
			*location_slot(c, old[i].key, old[i].address) = old[i];
	free(old);
	return 0;
}

static int insert_locked(SymbolCache *c, const char *key, uint64_t address,
			 const SymbolFrame *frames, size_t n, const SymbolFrame **ret_frames)
{
	SymbolFrame *copy;
	Location *l;
	int r;

	r = locations_grow(c);
	if (r < 0)
		return r;
	l = location_slot(c, key, address);
	if (l->key) {
		*ret_frames = l->frames;
		return 0;
	}
	copy = arena_alloc(c, n * sizeof(SymbolFrame));
	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		copy[i] = frames[i];
		r = intern_locked(c, frames[i].function, &copy[i].function);
		if (r < 0)
			return r;
		if (frames[i].file) {
			r = intern_locked(c, frames[i].file, &copy[i].file);
			if (r < 0)
				return r;
		}
	}
	/* interning may not have moved 'l': only the strings table grew */
	*l = (Location){ .key = key, .address = address, .frames = copy, .n_frames = n };
	c->n_locations++;
	*ret_frames = copy;
	return 0;
}

int symbol_cache_insert(SymbolCache *c, const char *key, uint64_t address,
			const SymbolFrame *frames, size_t n, const SymbolFrame **ret_frames)
{
	int r;

	pthread_mutex_lock(&c->lock);
	r = insert_locked(c, key, address, frames, n, ret_frames);
	pthread_mutex_unlock(&c->lock);
	return r;
}

bool symbol_cache_test_and_mark_module(SymbolCache *c, const char *key)
{
	bool seen = false;
	size_t j;

	pthread_mutex_lock(&c->lock);
	if (pointer_set_grow(&c->modules, &c->modules_mask, c->n_modules, true) < 0)
		goto out;
	for (j = hash_finalize((uintptr_t)key) & c->modules_mask; c->modules[j];
	     j = (j + 1) & c->modules_mask)
		if (c->modules[j] == key) {
			seen = true;
			goto out;
		}
	c->modules[j] = key;
	c->n_modules++;
out:
	pthread_mutex_unlock(&c->lock);
	return seen;
}

int symbol_cache_kernel_symbols(SymbolCache *c, const KernelSymbols **ret)
{
	int r = 0;

	pthread_mutex_lock(&c->lock);
	if (c->kernel_error)
		r = c->kernel_error;
	else if (!c->kernel)
		r = c->kernel_error = kernel_symbols_load(NULL, &c->kernel);
	if (r >= 0)
		*ret = c->kernel;
	pthread_mutex_unlock(&c->lock);
	return r;
}

void symbol_cache_get_stats(SymbolCache *c, SymbolCacheStats *ret)
{
	pthread_mutex_lock(&c->lock);
	*ret = (SymbolCacheStats){
		.locations = c->n_locations,
		.modules = c->n_modules,
		.bytes = c->arena_bytes +
			 (c->strings_mask + 1 + c->modules_mask + 1) * sizeof(char *) +
			 (c->locations_mask + 1) * sizeof(Location),
	};
	pthread_mutex_unlock(&c->lock);
}
