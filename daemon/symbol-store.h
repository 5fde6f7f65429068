/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The symbol cache on disk (DESIGN.md §8 "Caches"), so that the first session
 * after a restart is warm for binaries seen before: the state directory's
 * symbols/shared/ holds modules every caller shares (system files),
 * symbols/<uid>/ each caller's own, one file per module (names and unwind
 * table, symbol-module-file.h), keyed by file identity and build-id.
 *
 * Bounded: when all files together pass 'max_bytes', or one uid's pass a
 * quarter of it, the least recently used files go, from the directory that
 * is over its share (else the largest) — one user's binaries never evict
 * more than their own share of everyone else's. Files are replaced by
 * rename but not fsynced: a file lost or cut short by a crash is refused by
 * its checksum and only costs a cold session.
 */

#include <stdint.h>

#include "symbol-cache.h"

typedef struct SymbolStore SymbolStore;

/* Under 'state_fd' (profd's own directory). */
int symbol_store_new(int state_fd, uint64_t max_bytes, SymbolStore **ret);
SymbolStore *symbol_store_free(SymbolStore *s);

/* The SymbolCache's view of it; valid as long as the store. */
const SymbolCacheStore *symbol_store_interface(SymbolStore *s);

/* Bytes of all files now. */
uint64_t symbol_store_bytes(SymbolStore *s);
