/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Kernel symbols from /proc/kallsyms (core kernel and modules), loaded once
 * into one sorted array and looked up by binary search.
 */

#include <stddef.h>
#include <stdint.h>

typedef struct KernelSymbols KernelSymbols;

/* Load a kallsyms-format file ('path' NULL: /proc/kallsyms). -ENODATA if every address is 0. */
int kernel_symbols_load(const char *path, KernelSymbols **ret);
KernelSymbols *kernel_symbols_free(KernelSymbols *k);

/*
 * The symbol covering 'addr' (the nearest one at or below it, within the
 * kernel text); its name and module ("[kernel.kallsyms]" or "[module]").
 * Returns 0, or -ENOENT when no symbol covers 'addr'.
 */
int kernel_symbols_lookup(const KernelSymbols *k, uint64_t addr, const char **ret_name,
			  const char **ret_module, uint64_t *ret_start);
size_t kernel_symbols_count(const KernelSymbols *k);
/* The running kernel's build-id (hex, from /sys/kernel/notes), or NULL. */
const char *kernel_symbols_build_id(const KernelSymbols *k);
