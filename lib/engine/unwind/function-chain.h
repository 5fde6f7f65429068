/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The functions at an address, as DWARF tells them: the innermost
 * function-like DIE holding it (an inlined instance or a subprogram), then
 * each inlined instance's concrete parent function, up to the subprogram
 * they were inlined into.
 */

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

#include "cu-index.h"

#define FUNCTION_CHAIN_MAX 32

typedef struct FunctionChain {
	Dwarf_Die dies[FUNCTION_CHAIN_MAX]; /* innermost first */
	size_t n;      /* 0: no function of the unit holds the address */
	bool complete; /* the last is the subprogram; else the chain broke off */
} FunctionChain;

/*
 * By libdw alone: dwarf_getscopes() of the unit 'cudie', then
 * dwarf_getscopes_die() for each inlined instance's parent. Each walks the
 * unit's DIE tree from its start.
 */
void function_chain_by_libdw(Dwarf_Die *cudie, Dwarf_Addr pc, FunctionChain *ret);

/*
 * The same chain by the scope indexes of 'units' (each unit's built on its
 * first use): a binary search for the top-level function, a walk of its own
 * children. Where an index cannot tell, by libdw. 'units' NULL: by libdw.
 */
void function_chain_find(CuIndex *units, Dwarf_Die *cudie, Dwarf_Addr pc, FunctionChain *ret);
