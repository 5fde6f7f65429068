/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What was learned about code files, kept across sessions (DESIGN.md §4 and
 * §8 "Caches"): per module, the frames at each looked-up address (innermost,
 * inlined, first) and the module's compiled unwind table.
 *
 * A module is known by the identity of the file its names were read from —
 * device, inode, size and mtime — together with its build-id, and by a
 * scope: files owned by root and writable by nobody else are shared by every
 * caller; any other file belongs to the caller (uid) whose session read it.
 * A build-id alone proves nothing (anyone can write any build-id into a
 * file), so a name or table computed from one caller's file never reaches
 * another caller's profile.
 *
 * Sessions pin the modules their target maps (symbol_cache_acquire(), undone
 * by symbol_module_unpin()); what a module hands out — frames, strings, its
 * unwind table — stays valid while the caller holds a pin. Unpinned modules
 * are evicted whole, least recently used first, whenever the cache holds
 * more than its byte cap; pinned ones never are.
 *
 * Owned by the caller (the daemon keeps one for its lifetime; a resolver
 * without one makes a private one). Thread-safe. Also holds the kernel's
 * symbols, loaded once on first use.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cfi-table.h"
#include "kernel-symbols.h"

/* A module read for every caller: see module_identity_init(). */
#define SYMBOL_SCOPE_SHARED UINT32_MAX
#define SYMBOL_CACHE_DEFAULT_MAX_BYTES (256ULL << 20)

typedef struct FileIdentity {
	uint64_t dev, ino, size;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
} FileIdentity;

/* The identity of the file 'st' describes: changed by any replacement or rewrite of it. */
FileIdentity file_identity_of(const struct stat *st);

typedef struct ModuleIdentity {
	FileIdentity file;
	FileIdentity debug;   /* the separate debug file names come from; zero: none */
	uint32_t scope;       /* the caller's uid, or SYMBOL_SCOPE_SHARED */
	const char *build_id; /* lower-case hex or NULL; copied by the cache */
} ModuleIdentity;

/*
 * The identity of the file 'st' describes and of its separate debug file
 * 'debug_st' (NULL: none), read on behalf of uid 'caller': shared when both
 * are regular files owned by root that neither group nor others may write,
 * else scoped to 'caller'. Names found with and without debug info (or with
 * another debug file) belong to different modules.
 */
void module_identity_init(ModuleIdentity *id, const struct stat *st, const struct stat *debug_st,
			  uint32_t caller, const char *build_id);

typedef struct SymbolFrame {
	const char *function; /* never NULL */
	const char *file;     /* NULL without line info */
	uint32_t line;        /* 0 when unknown */
	bool inlined;
} SymbolFrame;

typedef struct SymbolCache SymbolCache;
typedef struct SymbolModule SymbolModule;

/*
 * Where modules outlive the process (the daemon's state directory), one file
 * per module: 'name' is its file name (SYMBOL_FILE_NAME_MAX, hex), and
 * id->scope says whose directory it belongs in. load() hands over a malloc'd
 * copy of the file (-ENOENT when there is none); save() replaces it. Both are
 * called without the cache's lock, from any thread that acquires or unpins.
 */
#define SYMBOL_FILE_NAME_MAX 33
typedef struct SymbolCacheStore {
	int (*load)(void *userdata, const ModuleIdentity *id, const char *name, void **ret_data,
		    size_t *ret_size);
	int (*save)(void *userdata, const ModuleIdentity *id, const char *name, const void *data,
		    size_t size);
	void *userdata;
} SymbolCacheStore;

int symbol_cache_new(SymbolCache **ret);
/* Free after every module was unpinned. */
SymbolCache *symbol_cache_free(SymbolCache *c);
void symbol_cache_freep(SymbolCache **c);

/* Bytes of unpinned modules the cache keeps at most (default SYMBOL_CACHE_DEFAULT_MAX_BYTES). */
void symbol_cache_set_max_bytes(SymbolCache *c, uint64_t max_bytes);

/*
 * Load each module from 'store' when first acquired, and save it there when
 * its last pin goes and it learned something; NULL: none (the default).
 * 'store' must outlive the cache.
 */
void symbol_cache_set_store(SymbolCache *c, const SymbolCacheStore *store);

/* The module of 'id', found or created, pinned for the caller. */
int symbol_cache_acquire(SymbolCache *c, const ModuleIdentity *id, SymbolModule **ret);
/* Drop a pin; NULL is fine. Returns NULL. */
SymbolModule *symbol_module_unpin(SymbolModule *m);

/* Returns true and the frames when 'address' (module-relative) is known. */
bool symbol_module_lookup(SymbolModule *m, uint64_t address, const SymbolFrame **ret_frames,
			  size_t *ret_n);
/* Store (copying the strings); returns the stored frames. Storing twice keeps the first. */
int symbol_module_insert(SymbolModule *m, uint64_t address, const SymbolFrame *frames, size_t n,
			 const SymbolFrame **ret_frames);

/* Has any session resolved code of this module before? Marks it seen either way. */
bool symbol_module_test_and_mark_seen(SymbolModule *m);
bool symbol_module_was_seen(SymbolModule *m);

const ModuleIdentity *symbol_module_identity(const SymbolModule *m);

/* Call 'fn' for every known location (under the cache's lock: 'fn' must not call the cache). */
typedef int (*SymbolLocationFn)(void *userdata, uint64_t address, const SymbolFrame *frames,
				size_t n);
int symbol_module_foreach_location(SymbolModule *m, SymbolLocationFn fn, void *userdata);

/* The module's unwind table, or NULL while none was built. */
const CfiTable *symbol_module_get_cfi(SymbolModule *m);
/* Keep 'table' (taken, also on failure) unless another was kept first; returns the kept one. */
const CfiTable *symbol_module_set_cfi(SymbolModule *m, CfiTable *table);

/*
 * The module's debug info opened for naming (module-naming.h), kept while the module is
 * cached, or NULL while none was made. set keeps 'naming' (taken, also on failure) unless
 * another was kept first; returns the kept one.
 */
typedef struct ModuleNaming ModuleNaming;
ModuleNaming *symbol_module_get_naming(SymbolModule *m);
ModuleNaming *symbol_module_set_naming(SymbolModule *m, ModuleNaming *naming);

/* The running kernel's symbols, loaded through 'files' on the first call; a failure is
 * remembered. */
int symbol_cache_kernel_symbols(SymbolCache *c, const TargetFileOpener *files,
				const KernelSymbols **ret);

typedef struct SymbolCacheStats {
	size_t locations, modules, pinned_modules, evicted_modules;
	size_t loaded_modules, saved_modules; /* through the store */
	size_t bytes; /* of every module, pinned or not */
} SymbolCacheStats;
void symbol_cache_get_stats(SymbolCache *c, SymbolCacheStats *ret);
