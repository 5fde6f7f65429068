/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Kernel symbols from /proc/kallsyms (core kernel and modules), loaded once
 * into one sorted array and looked up by binary search.
 */

#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "target-files.h"

typedef struct KernelSymbols KernelSymbols;

/*
 * Load a kallsyms-format file and, with 'notes_fd' >= 0, the build-id from
 * the ELF notes of the same kernel; or a table kernel_symbols_write_table()
 * made (it carries the build-id: 'notes_fd' is not read). The descriptors
 * stay the caller's. -ENODATA if every address is 0 (kptr_restrict),
 * -EBADMSG for a damaged table (a sealed one, which is mapped, only for a
 * damaged header or names: its symbols are checked as they are looked up).
 */
int kernel_symbols_load(int kallsyms_fd, int notes_fd, KernelSymbols **ret);
/*
 * Write 'k' to 'fd' (at its offset) as a table kernel_symbols_load() reads
 * back with no parsing or sorting: a few milliseconds instead of the ~50 of
 * /proc/kallsyms (most of it the kernel making the text).
 */
int kernel_symbols_write_table(const KernelSymbols *k, int fd);
/* The running kernel's: /proc/kallsyms and /sys/kernel/notes through 'files'. */
int kernel_symbols_load_running(const TargetFileOpener *files, KernelSymbols **ret);
KernelSymbols *kernel_symbols_free(KernelSymbols *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(KernelSymbols *, kernel_symbols_free);

/*
 * The symbol covering 'addr' (the nearest one at or below it, within the
 * kernel text); its name and module ("[kernel.kallsyms]" or "[module]").
 * Returns 0, or -ENOENT when no symbol covers 'addr', -EBADMSG when the
 * symbol's name is not in the table (a damaged sealed table).
 */
int kernel_symbols_lookup(const KernelSymbols *k, uint64_t addr, const char **ret_name,
			  const char **ret_module, uint64_t *ret_start);
size_t kernel_symbols_count(const KernelSymbols *k);
/* The running kernel's build-id (hex, from /sys/kernel/notes), or NULL. */
const char *kernel_symbols_build_id(const KernelSymbols *k);
