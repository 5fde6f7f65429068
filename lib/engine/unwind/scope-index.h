/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One unit's scopes, for finding the functions at an address without libdw's
 * dwarf_getscopes(), which walks the unit's whole DIE tree for every address
 * (1-56 ms each in a unit of thousands of functions): the unit's top-level
 * DIEs with code, sorted by address range (imported units' in their place,
 * as libdw visits them), and the subprograms a walk of the unit reaches
 * (where dwarf_getscopes() looks an inlined instance's abstract origin up).
 * Built by one walk of the unit.
 */

#include <elfutils/libdw.h>
#include <stdbool.h>

typedef struct ScopeIndex ScopeIndex;

/* -EBADMSG where libdw reports an error on the way: dwarf_getscopes() must decide then. */
int scope_index_build(Dwarf_Die *cudie, ScopeIndex **ret);
ScopeIndex *scope_index_free(ScopeIndex *x);

/* The first top-level DIE in the unit's order whose ranges hold 'pc'; -ENOENT: none. */
int scope_index_find(const ScopeIndex *x, Dwarf_Addr pc, Dwarf_Die *ret);

/* Does a walk of the unit (dwarf_getscopes' visit) reach subprogram 'die' of it? */
bool scope_index_reaches(const ScopeIndex *x, const Dwarf_Die *die);

/* libdw's rule for which DIEs a scope walk descends into. */
bool scope_may_have_scopes(Dwarf_Die *die);
