/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Naming one code address of a module as perf does: the function from the
 * symbol table (demangled), file:line from the line table, and the chain of
 * functions inlined at that address expanded into frames, innermost first.
 * Debug info comes from the file itself or from separate debug files that
 * libdwfl finds by build-id or .gnu_debuglink.
 */

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "address-space.h"
#include "symbol-cache.h"

/* More inline levels than this are cut, keeping the outermost function. */
#define SYMBOLIZE_MAX_INLINE 32

/*
 * The frames at absolute address 'addr' of 'mod', from its SymbolModule or
 * computed and stored there (valid while info->module is pinned). Returns 0,
 * or -ENOENT when neither symbols nor DWARF name it.
 */
int symbolize_address(Dwfl_Module *mod, ModuleInfo *info, uint64_t addr,
		      const SymbolFrame **ret_frames, size_t *ret_n);
