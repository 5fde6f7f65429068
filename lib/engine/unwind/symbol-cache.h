/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What addresses are called, kept across sessions: (module key, module-relative
 * address) -> the frames at that location, innermost (inlined) first. The
 * module key is the build-id in hex, or the path for files without one, so a
 * rebuilt binary never inherits stale names.
 *
 * Owned by the caller (the daemon keeps one for its lifetime; a resolver
 * without one makes a private one). Thread-safe. Entries are immutable and
 * live as long as the cache, so lookups hand out pointers without copying.
 * Also holds the kernel's symbols, loaded once on first use.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel-symbols.h"

typedef struct SymbolFrame {
	const char *function; /* never NULL */
	const char *file;     /* NULL without line info */
	uint32_t line;        /* 0 when unknown */
	bool inlined;
} SymbolFrame;

typedef struct SymbolCache SymbolCache;

int symbol_cache_new(SymbolCache **ret);
SymbolCache *symbol_cache_free(SymbolCache *c);
void symbol_cache_freep(SymbolCache **c);

/* A copy of 's' owned by the cache, the same pointer for equal strings. */
int symbol_cache_intern(SymbolCache *c, const char *s, const char **ret);

/* 'key' must come from symbol_cache_intern(). Returns true and the frames when known. */
bool symbol_cache_lookup(SymbolCache *c, const char *key, uint64_t address,
			 const SymbolFrame **ret_frames, size_t *ret_n);
/* Store (copying the strings); returns the stored frames. Storing twice keeps the first. */
int symbol_cache_insert(SymbolCache *c, const char *key, uint64_t address,
			const SymbolFrame *frames, size_t n, const SymbolFrame **ret_frames);

/* Has any session resolved code of module 'key' before? Marks it seen either way. */
bool symbol_cache_test_and_mark_module(SymbolCache *c, const char *key);

/* /proc/kallsyms, loaded on the first call; a failure is remembered. */
int symbol_cache_kernel_symbols(SymbolCache *c, const KernelSymbols **ret);

typedef struct SymbolCacheStats {
	size_t locations, modules, bytes;
} SymbolCacheStats;
void symbol_cache_get_stats(SymbolCache *c, SymbolCacheStats *ret);
