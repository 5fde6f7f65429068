/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The running kernel's symbols for the whole process, handed out as a table
 * (kernel_symbols_write_table()) in a sealed memfd: every resolver and every
 * sandboxed unwinder that names kernel frames loads them in about a
 * millisecond instead of reading /proc/kallsyms (~50 ms of CPU, most of it
 * the kernel making the text). Read on first use and again when the
 * kernel's modules changed since; kept in a store (the symbol cache's on
 * disk) under a name made of the boot id and the modules, so a restarted
 * daemon reads /proc/kallsyms only after a reboot or a module change. BPF
 * programs loaded later are not named (as with a kallsyms read once per
 * cache). Thread-safe.
 */

#include "cleanup.h"
#include "symbol-cache.h"

typedef struct KernelTable KernelTable;

/* Reads nothing yet; 'store' (NULL: none; borrowed, outlives the table) keeps it across runs. */
int kernel_table_new(const SymbolCacheStore *store, KernelTable **ret);
KernelTable *kernel_table_free(KernelTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(KernelTable *, kernel_table_free);

/*
 * A new read-only descriptor of the table (the caller's), current with the
 * kernel's modules: -ENODATA when the kernel shows no addresses (kptr_restrict).
 */
int kernel_table_open(KernelTable *t);
