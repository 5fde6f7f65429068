/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "symbol-cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "array.h"
#include "cleanup.h"
#include "hash.h"
#include "id-table.h"
#include "lru.h"
#include "module-naming.h"
#include "symbol-module-file.h"

/* Bump allocator per module: entries never move and go all at once with their module. */
typedef struct ArenaBlock {
	struct ArenaBlock *next;
	size_t used, size;
	max_align_t data[];
} ArenaBlock;

#define ARENA_FIRST_BLOCK 1024U
#define ARENA_MAX_BLOCK (64U * 1024U)

typedef struct Location {
	uint64_t address;
	const SymbolFrame *frames;
	size_t n_frames;
} Location;

struct SymbolModule {
	SymbolCache *cache;
	uint32_t index;    /* in the cache's modules */
	LruLink unpinned;  /* in the cache's unpinned list while no one holds it */
	ModuleIdentity id; /* build_id points into the arena */
	uint64_t hash;
	unsigned pins;
	bool seen;
	bool dirty; /* learned something the store does not have */

	ArenaBlock *arena;
	/* the interned strings (in the arena) and the locations, each indexed by its id */
	const char **strings;
	size_t n_strings, strings_allocated;
	IdTable string_ids;
	Location *locations;
	size_t n_locations, locations_allocated;
	IdTable location_ids;
	const CfiTable *cfi; /* set once, read without the lock */
	ModuleNaming *naming; /* set once, read without the lock */
	size_t bytes;        /* everything above */
};

struct SymbolCache {
	pthread_mutex_t lock;
	SymbolModule **modules; /* indexed by SymbolModule.index */
	size_t modules_allocated;
	IdTable module_ids;
	size_t n_modules, n_pinned, n_evicted, n_locations;
	LruList unpinned; /* modules no one holds, in the order they were let go */
	uint64_t bytes, max_bytes;

	const SymbolCacheStore *store;
	size_t n_loaded, n_saved;

	KernelSymbols *kernel;
	int kernel_error; /* loading failed once: do not re-read kallsyms per sample */
};

/* Only root can change such a file, so what it says is the same for every caller. */
static bool is_system_file(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

FileIdentity file_identity_of(const struct stat *st)
{
	return (FileIdentity){
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_sec = st->st_mtim.tv_sec,
		.mtime_nsec = (uint32_t)st->st_mtim.tv_nsec,
	};
}

void module_identity_init(ModuleIdentity *id, const struct stat *st, const struct stat *debug_st,
			  uint32_t caller, const char *build_id)
{
	bool shared = is_system_file(st) && (!debug_st || is_system_file(debug_st));

	*id = (ModuleIdentity){
		.file = file_identity_of(st),
		.debug = debug_st ? file_identity_of(debug_st) : (FileIdentity){},
		.scope = shared ? SYMBOL_SCOPE_SHARED : caller,
		.build_id = build_id,
	};
}

static uint64_t hash_file(uint64_t h, const FileIdentity *f)
{
	h = hash_combine(hash_combine(hash_combine(h, f->dev), f->ino), f->size);
	return hash_combine(hash_combine(h, (uint64_t)f->mtime_sec), f->mtime_nsec);
}

static uint64_t hash_identity(const ModuleIdentity *id)
{
	uint64_t h = hash_combine(hash_file(hash_file(0, &id->file), &id->debug), id->scope);

	return id->build_id ? hash_string(h, id->build_id) : h;
}

static bool file_equal(const FileIdentity *a, const FileIdentity *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

static bool identity_equal(const ModuleIdentity *a, const ModuleIdentity *b)
{
	return file_equal(&a->file, &b->file) && file_equal(&a->debug, &b->debug) &&
	       a->scope == b->scope && !a->build_id == !b->build_id &&
	       (!a->build_id || strcmp(a->build_id, b->build_id) == 0);
}

/* A module's heap grew (or shrank) by 'delta' bytes. */
static void account(SymbolModule *m, ssize_t delta)
{
	m->bytes += (size_t)delta;
	m->cache->bytes += (uint64_t)delta;
}

static void *arena_alloc(SymbolModule *m, size_t size)
{
	ArenaBlock *b = m->arena;
	void *p;

	size = (size + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
	if (!b || b->size - b->used < size) {
		/* blocks double with the module: small modules stay small */
		size_t block = b ? (b->size < ARENA_MAX_BLOCK ? b->size * 2 : b->size)
				 : ARENA_FIRST_BLOCK;

		if (block < size)
			block = size;
		b = malloc(sizeof(ArenaBlock) + block);
		if (!b)
			return NULL;
		b->size = block;
		b->used = 0;
		b->next = m->arena;
		m->arena = b;
		account(m, (ssize_t)(sizeof(ArenaBlock) + block));
	}
	p = (char *)b->data + b->used;
	b->used += size;
	return p;
}

static void module_free(SymbolModule *m)
{
	while (m->arena) {
		ArenaBlock *next = m->arena->next;

		free(m->arena);
		m->arena = next;
	}
	free(m->strings);
	id_table_done(&m->string_ids);
	free(m->locations);
	id_table_done(&m->location_ids);
	cfi_table_free((CfiTable *)m->cfi);
	module_naming_free(m->naming);
	free(m);
}

int symbol_cache_new(SymbolCache **ret)
{
	_cleanup_(symbol_cache_freep) SymbolCache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->max_bytes = SYMBOL_CACHE_DEFAULT_MAX_BYTES;
	*ret = TAKE_PTR(c);
	return 0;
}

SymbolCache *symbol_cache_free(SymbolCache *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n_modules; i++)
		module_free(c->modules[i]);
	free(c->modules);
	id_table_done(&c->module_ids);
	kernel_symbols_free(c->kernel);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

void symbol_cache_freep(SymbolCache **c)
{
	symbol_cache_free(*c);
}

static uint64_t module_hash(const void *userdata, uint32_t index)
{
	const SymbolCache *c = userdata;

	return c->modules[index]->hash;
}

static bool module_has_identity(const void *userdata, uint32_t index)
{
	const IdTableLookup *l = userdata;
	const SymbolCache *c = l->items;

	return identity_equal(&c->modules[index]->id, l->key);
}

static bool module_is(const void *userdata, uint32_t index)
{
	const SymbolModule *m = userdata;

	return index == m->index;
}

/* The slot of a module in the cache's table. */
static uint32_t module_slot(const SymbolCache *c, const SymbolModule *m)
{
	uint32_t slot;

	(void)id_table_find(&c->module_ids, m->hash, module_is, m, &slot);
	return slot;
}

/* The last module takes the place of the one that goes: the indices stay dense. */
static void modules_remove(SymbolCache *c, SymbolModule *m)
{
	SymbolModule *last;

	id_table_remove(&c->module_ids, module_slot(c, m), module_hash, c);
	last = c->modules[--c->n_modules];
	if (last != m) {
		c->module_ids.slots[module_slot(c, last)] = m->index;
		last->index = m->index;
		c->modules[m->index] = last;
	}
}

static void evict(SymbolCache *c, SymbolModule *m)
{
	modules_remove(c, m);
	lru_remove(&c->unpinned, &m->unpinned);
	c->bytes -= m->bytes;
	c->n_locations -= m->n_locations;
	c->n_evicted++;
	module_free(m);
}

/* Unpinned modules go, least recently used first, until the cache is within its cap. */
static void trim(SymbolCache *c)
{
	SymbolModule *m;

	while (c->bytes > c->max_bytes && (m = LRU_OLDEST(&c->unpinned, SymbolModule, unpinned)))
		evict(c, m);
}

void symbol_cache_set_max_bytes(SymbolCache *c, uint64_t max_bytes)
{
	pthread_mutex_lock(&c->lock);
	c->max_bytes = max_bytes;
	trim(c);
	pthread_mutex_unlock(&c->lock);
}

static int module_new(SymbolCache *c, const ModuleIdentity *id, uint64_t hash,
		      SymbolModule **ret)
{
	SymbolModule *m = calloc(1, sizeof(*m));
	char *build_id;

	if (!m)
		return -ENOMEM;
	m->cache = c;
	m->id = *id;
	m->hash = hash;
	account(m, sizeof(*m));
	if (id->build_id) {
		size_t len = strlen(id->build_id);

		build_id = arena_alloc(m, len + 1);
		if (!build_id) {
			account(m, -(ssize_t)m->bytes);
			module_free(m);
			return -ENOMEM;
		}
		memcpy(build_id, id->build_id, len + 1);
		m->id.build_id = build_id;
	}
	*ret = m;
	return 0;
}

void symbol_cache_set_store(SymbolCache *c, const SymbolCacheStore *store)
{
	pthread_mutex_lock(&c->lock);
	c->store = store;
	pthread_mutex_unlock(&c->lock);
}

/* The module's file name in a store: its identity hashed two ways, in hex. */
static void file_name(const ModuleIdentity *id, char ret[SYMBOL_FILE_NAME_MAX])
{
	uint64_t h = hash_identity(id);

	snprintf(ret, SYMBOL_FILE_NAME_MAX, "%016llx%016llx", (unsigned long long)h,
		 (unsigned long long)hash_combine(h, 0x5eed));
}

/* A module new to this process: what the store knows of it, if anything (a cache: no errors). */
static void load(SymbolCache *c, const SymbolCacheStore *store, SymbolModule *m)
{
	char name[SYMBOL_FILE_NAME_MAX];
	_cleanup_free_ void *data = NULL;
	size_t size;

	file_name(&m->id, name);
	if (store->load(store->userdata, &m->id, name, &data, &size) < 0 ||
	    symbol_module_deserialize(m, data, size) < 0)
		return;
	pthread_mutex_lock(&c->lock);
	m->dirty = false;
	c->n_loaded++;
	pthread_mutex_unlock(&c->lock);
}

static void save(SymbolCache *c, const SymbolCacheStore *store, SymbolModule *m)
{
	char name[SYMBOL_FILE_NAME_MAX];
	_cleanup_free_ char *data = NULL;
	size_t size;

	file_name(&m->id, name);
	if (symbol_module_serialize(m, &data, &size) < 0 ||
	    store->save(store->userdata, &m->id, name, data, size) < 0)
		return;
	pthread_mutex_lock(&c->lock);
	c->n_saved++;
	pthread_mutex_unlock(&c->lock);
}

int symbol_cache_acquire(SymbolCache *c, const ModuleIdentity *id, SymbolModule **ret)
{
	const SymbolCacheStore *store = NULL;
	const IdTableLookup lookup = { c, id };
	uint64_t hash = hash_identity(id);
	SymbolModule *m;
	uint32_t slot;
	int r = 0;

	pthread_mutex_lock(&c->lock);
	if (c->module_ids.slots &&
	    id_table_find(&c->module_ids, hash, module_has_identity, &lookup, &slot)) {
		m = c->modules[c->module_ids.slots[slot]];
		if (m->pins == 0)
			lru_remove(&c->unpinned, &m->unpinned);
	} else {
		r = id_table_reserve(&c->module_ids, 1, module_hash, c);
		if (r >= 0)
			r = ARRAY_RESERVE(c->modules, c->modules_allocated, c->n_modules + 1, 64);
		if (r >= 0)
			r = module_new(c, id, hash, &m);
		if (r < 0)
			goto out;
		m->index = (uint32_t)c->n_modules;
		c->modules[c->n_modules++] = m;
		id_table_insert(&c->module_ids, id_table_empty_slot(&c->module_ids, hash), m->index);
		store = c->store;
	}
	if (m->pins++ == 0)
		c->n_pinned++;
	trim(c);
	*ret = m;
out:
	pthread_mutex_unlock(&c->lock);
	/* pinned, so it stays while the file is read; meanwhile others just find it empty */
	if (store)
		load(c, store, m);
	return r;
}

SymbolModule *symbol_module_unpin(SymbolModule *m)
{
	SymbolCache *c;

	if (!m)
		return NULL;
	c = m->cache;
	pthread_mutex_lock(&c->lock);
	if (m->pins == 1 && m->dirty && c->store) {
		const SymbolCacheStore *store = c->store;

		/* still pinned while it is written; what it learns meanwhile is saved next time */
		m->dirty = false;
		pthread_mutex_unlock(&c->lock);
		save(c, store, m);
		pthread_mutex_lock(&c->lock);
	}
	if (--m->pins == 0) {
		c->n_pinned--;
		lru_add(&c->unpinned, &m->unpinned);
		trim(c);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static uint64_t string_hash(const void *userdata, uint32_t id)
{
	const SymbolModule *m = userdata;

	return hash_string(0, m->strings[id]);
}

static bool string_equal(const void *userdata, uint32_t id)
{
	const IdTableLookup *l = userdata;
	const SymbolModule *m = l->items;

	return strcmp(m->strings[id], l->key) == 0;
}

static int intern(SymbolModule *m, const char *s, const char **ret)
{
	const IdTableLookup lookup = { m, s };
	uint32_t slot;
	size_t len;
	char *copy;
	int r;

	r = id_table_reserve(&m->string_ids, 1, string_hash, m);
	if (r < 0)
		return r;
	r = ARRAY_RESERVE(m->strings, m->strings_allocated, m->n_strings + 1, 64);
	if (r < 0)
		return r;
	if (id_table_find(&m->string_ids, hash_string(0, s), string_equal, &lookup, &slot)) {
		*ret = m->strings[m->string_ids.slots[slot]];
		return 0;
	}
	len = strlen(s);
	copy = arena_alloc(m, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len + 1);
	m->strings[m->n_strings] = copy;
	id_table_insert(&m->string_ids, slot, (uint32_t)m->n_strings++);
	*ret = copy;
	return 0;
}

static uint64_t location_address(const void *userdata, uint32_t id)
{
	const SymbolModule *m = userdata;

	return m->locations[id].address;
}

/* The location known at 'address', or NULL. */
static const Location *location_find(const SymbolModule *m, uint64_t address, uint32_t *ret_slot)
{
	if (!id_table_find_key(&m->location_ids, address, location_address, m, ret_slot))
		return NULL;
	return &m->locations[m->location_ids.slots[*ret_slot]];
}

bool symbol_module_lookup(SymbolModule *m, uint64_t address, const SymbolFrame **ret_frames,
			  size_t *ret_n)
{
	const Location *l;
	uint32_t slot;

	pthread_mutex_lock(&m->cache->lock);
	l = location_find(m, address, &slot);
	if (l) {
		*ret_frames = l->frames;
		*ret_n = l->n_frames;
	}
	pthread_mutex_unlock(&m->cache->lock);
	return l != NULL;
}

/* The heap the module's tables take (their growth is accounted to the module). */
static size_t tables_bytes(const SymbolModule *m)
{
	const IdTable *tables[] = { &m->string_ids, &m->location_ids };
	size_t bytes = m->strings_allocated * sizeof(char *) +
		       m->locations_allocated * sizeof(Location);

	for (size_t i = 0; i < ELEMENTSOF(tables); i++)
		bytes += tables[i]->slots ? ((size_t)tables[i]->mask + 1) * sizeof(uint32_t) : 0;
	return bytes;
}

static int insert_locked(SymbolModule *m, uint64_t address, const SymbolFrame *frames, size_t n,
			 const SymbolFrame **ret_frames)
{
	const Location *l;
	SymbolFrame *copy;
	uint32_t slot;
	int r;

	r = id_table_reserve_keys(&m->location_ids, 1, location_address, m);
	if (r < 0)
		return r;
	r = ARRAY_RESERVE(m->locations, m->locations_allocated, m->n_locations + 1, 64);
	if (r < 0)
		return r;
	l = location_find(m, address, &slot);
	if (l) {
		*ret_frames = l->frames;
		return 0;
	}
	copy = arena_alloc(m, n * sizeof(SymbolFrame));
	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		copy[i] = frames[i];
		r = intern(m, frames[i].function, &copy[i].function);
		if (r < 0)
			return r;
		if (frames[i].file) {
			r = intern(m, frames[i].file, &copy[i].file);
			if (r < 0)
				return r;
		}
	}
	/* interning did not move 'slot': only the strings' table grew */
	m->locations[m->n_locations] = (Location){ .address = address, .frames = copy, .n_frames = n };
	id_table_insert(&m->location_ids, slot, (uint32_t)m->n_locations++);
	m->dirty = true;
	m->cache->n_locations++;
	*ret_frames = copy;
	return 0;
}

int symbol_module_insert(SymbolModule *m, uint64_t address, const SymbolFrame *frames, size_t n,
			 const SymbolFrame **ret_frames)
{
	size_t before;
	int r;

	if (n == 0)
		return -EINVAL;
	pthread_mutex_lock(&m->cache->lock);
	before = tables_bytes(m);
	r = insert_locked(m, address, frames, n, ret_frames);
	account(m, (ssize_t)(tables_bytes(m) - before));
	pthread_mutex_unlock(&m->cache->lock);
	return r;
}

bool symbol_module_test_and_mark_seen(SymbolModule *m)
{
	bool seen;

	pthread_mutex_lock(&m->cache->lock);
	seen = m->seen;
	m->seen = true;
	m->dirty = m->dirty || !seen;
	pthread_mutex_unlock(&m->cache->lock);
	return seen;
}

bool symbol_module_was_seen(SymbolModule *m)
{
	bool seen;

	pthread_mutex_lock(&m->cache->lock);
	seen = m->seen;
	pthread_mutex_unlock(&m->cache->lock);
	return seen;
}

const ModuleIdentity *symbol_module_identity(const SymbolModule *m)
{
	return &m->id;
}

int symbol_module_foreach_location(SymbolModule *m, SymbolLocationFn fn, void *userdata)
{
	int r = 0;

	pthread_mutex_lock(&m->cache->lock);
	for (size_t i = 0; i < m->n_locations && r >= 0; i++)
		r = fn(userdata, m->locations[i].address, m->locations[i].frames,
		       m->locations[i].n_frames);
	pthread_mutex_unlock(&m->cache->lock);
	return r;
}

const CfiTable *symbol_module_get_cfi(SymbolModule *m)
{
	return __atomic_load_n(&m->cfi, __ATOMIC_ACQUIRE);
}

const CfiTable *symbol_module_set_cfi(SymbolModule *m, CfiTable *table)
{
	const CfiTable *kept;

	pthread_mutex_lock(&m->cache->lock);
	kept = m->cfi;
	if (!kept) {
		account(m, (ssize_t)cfi_table_bytes(table));
		__atomic_store_n(&m->cfi, table, __ATOMIC_RELEASE);
		m->dirty = true;
		kept = table;
		table = NULL;
		trim(m->cache);
	}
	pthread_mutex_unlock(&m->cache->lock);
	cfi_table_free(table);
	return kept;
}

ModuleNaming *symbol_module_get_naming(SymbolModule *m)
{
	return __atomic_load_n(&m->naming, __ATOMIC_ACQUIRE);
}

ModuleNaming *symbol_module_set_naming(SymbolModule *m, ModuleNaming *naming)
{
	ModuleNaming *kept;

	pthread_mutex_lock(&m->cache->lock);
	kept = m->naming;
	if (!kept) {
		account(m, (ssize_t)module_naming_bytes(naming));
		__atomic_store_n(&m->naming, naming, __ATOMIC_RELEASE);
		kept = naming;
		naming = NULL;
		trim(m->cache);
	}
	pthread_mutex_unlock(&m->cache->lock);
	module_naming_free(naming);
	return kept;
}

int symbol_cache_kernel_symbols(SymbolCache *c, const TargetFileOpener *files,
				const KernelSymbols **ret)
{
	int r = 0;

	pthread_mutex_lock(&c->lock);
	if (c->kernel_error)
		r = c->kernel_error;
	else if (!c->kernel)
		r = c->kernel_error = kernel_symbols_load_running(files, &c->kernel);
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
		.pinned_modules = c->n_pinned,
		.evicted_modules = c->n_evicted,
		.loaded_modules = c->n_loaded,
		.saved_modules = c->n_saved,
		.bytes = c->bytes + c->modules_allocated * sizeof(SymbolModule *) +
			 (c->module_ids.slots ? ((size_t)c->module_ids.mask + 1) * sizeof(uint32_t) : 0),
	};
	pthread_mutex_unlock(&c->lock);
}
