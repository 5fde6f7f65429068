/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A module's compile units by address range, for naming: from the module's
 * .debug_aranges read directly (debug-aranges.h: libdw's dwarf_getaranges()
 * and so dwfl_module_addrdie() read every unit's header first, ~1.6 ms for
 * libc in each new unwinder), each unit looked up when an address first
 * needs it; for addresses it does not cover (clang emits no .debug_aranges),
 * every unit's ranges, read once when first needed. Lookups are a binary
 * search. Also keeps each unit's scope index (scope-index.h), built on first use.
 */

#include <elfutils/libdwfl.h>
#include <stdint.h>

#include "scope-index.h"

typedef struct CuIndex CuIndex;

/* Empty: the ranges are read on the first cu_index_find(), each unit's scopes on first use. */
int cu_index_new(Dwfl_Module *mod, CuIndex **ret);
CuIndex *cu_index_free(CuIndex *x);

/*
 * The unit covering absolute address 'addr' and the module's bias, or NULL.
 * The DIE lives as long as the index.
 */
Dwarf_Die *cu_index_find(CuIndex *x, uint64_t addr, Dwarf_Addr *ret_bias);

/*
 * The scope index of the unit (or partial unit) 'cudie' of the module, built
 * on the first call; a failed build is remembered (-EBADMSG, -ELOOP: libdw
 * must decide for that unit).
 */
int cu_index_scopes(CuIndex *x, Dwarf_Die *cudie, const ScopeIndex **ret);
