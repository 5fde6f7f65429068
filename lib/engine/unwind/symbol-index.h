/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A module's sized symbols sorted by address, for naming addresses by binary
 * search: libdwfl 0.188's dwfl_module_addrinfo() reads every symbol of the
 * module for each address, which made naming a whole machine's stacks cost
 * seconds. The lookup picks what dwfl_module_addrinfo() picks among the sized
 * symbols holding the address (the same preferences, in the same table
 * order); it answers "ask libdwfl" (-EAGAIN) for the rest — an address only a
 * sizeless label covers, or a module whose symbols libdwfl adjusts (function
 * descriptors) — so the names never differ from libdwfl's.
 */

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

typedef struct SymbolIndex SymbolIndex;

/* Read the symbol table of 'mod' once. */
int symbol_index_build(Dwfl_Module *mod, SymbolIndex **ret);
SymbolIndex *symbol_index_free(SymbolIndex *x);
void symbol_index_freep(SymbolIndex **x);
/* The memory it holds. */
size_t symbol_index_bytes(const SymbolIndex *x);

/*
 * The name of the symbol holding absolute address 'addr' of 'mod' (the
 * module it was built from), as dwfl_module_addrinfo() names it; -ENOENT
 * when it names nothing (no symbol holds it, no label lies below it);
 * -EAGAIN when only dwfl_module_addrinfo() can tell.
 */
int symbol_index_lookup(const SymbolIndex *x, Dwfl_Module *mod, uint64_t addr,
			const char **ret_name);
