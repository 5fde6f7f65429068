/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "function-chain.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "scope-index.h"

/* Scopes deeper below a top-level function than this are left to libdw. */
#define PATH_MAX_DEPTH 128

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* The innermost function-like DIE among 'scopes' from index 'from' on, or -1. */
static int first_function(Dwarf_Die *scopes, int n, int from)
{
	for (int i = from; i < n; i++)
		if (is_function(&scopes[i]))
			return i;
	return -1;
}

void function_chain_by_libdw(Dwarf_Die *cudie, Dwarf_Addr pc, FunctionChain *ret)
{
	_cleanup_free_ Dwarf_Die *scopes = NULL;
	Dwarf_Die die;
	int n, i;

	*ret = (FunctionChain){};
	n = dwarf_getscopes(cudie, pc, &scopes);
	i = n > 0 ? first_function(scopes, n, 0) : -1;
	if (i < 0)
		return;
	die = scopes[i];
	while (ret->n < FUNCTION_CHAIN_MAX) {
		_cleanup_free_ Dwarf_Die *parents = NULL;
		int m, j;

		ret->dies[ret->n++] = die;
		if (dwarf_tag(&die) == DW_TAG_subprogram) {
			ret->complete = true;
			return;
		}
		m = dwarf_getscopes_die(&die, &parents);
		j = m > 1 ? first_function(parents, m, 1) : -1;
		if (j < 0)
			return;
		die = parents[j];
	}
}

/*
 * The scopes holding 'pc' from 'top' down, as dwarf_getscopes() descends: into
 * the first child holding it, at each level. 1: found; 0: libdw must decide.
 */
static int descend(Dwarf_Die *top, Dwarf_Addr pc, Dwarf_Die *path, size_t *ret_depth)
{
	size_t depth = 0;

	path[0] = *top;
	for (;;) {
		Dwarf_Die child;
		bool found = false;
		int r;

		if (!scope_may_have_scopes(&path[depth]) || dwarf_haschildren(&path[depth]) <= 0)
			break;
		if (depth + 1 == PATH_MAX_DEPTH || dwarf_child(&path[depth], &child) != 0)
			return 0;
		do {
			/* an imported unit in a function, an error: libdw's own rules */
			if (dwarf_tag(&child) == DW_TAG_imported_unit)
				return 0;
			r = dwarf_haspc(&child, pc);
			if (r < 0)
				return 0;
			if (r > 0) {
				path[++depth] = child;
				found = true;
				break;
			}
		} while ((r = dwarf_siblingof(&child, &child)) == 0);
		if (r < 0)
			return 0;
		if (!found)
			break;
	}
	*ret_depth = depth;
	return 1;
}

/*
 * dwarf_getscopes() gives nothing when the abstract origin of the innermost
 * inlined instance is not where its walk looks for it: libdw 0.188 walks the
 * address's unit, newer ones the origin's. An origin in another unit (link-time
 * optimised code) is left to libdw. 1: reached; 0: not; -1: libdw must decide.
 */
static int origin_reached(const ScopeIndex *x, Dwarf_Die *cudie, Dwarf_Die *inlined)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin, unit;

	if (!dwarf_formref_die(dwarf_attr(inlined, DW_AT_abstract_origin, &attr), &origin) ||
	    dwarf_tag(&origin) != DW_TAG_subprogram || !dwarf_diecu(&origin, &unit, NULL, NULL) ||
	    unit.addr != cudie->addr)
		return -1;
	return scope_index_reaches(x, &origin);
}

/* The chain by the index; false: libdw must decide. */
static bool chain_by_index(CuIndex *units, Dwarf_Die *cudie, Dwarf_Addr pc, FunctionChain *ret)
{
	Dwarf_Die path[PATH_MAX_DEPTH], top;
	const ScopeIndex *x;
	size_t depth;
	int k, inlined = -1;

	if (cu_index_scopes(units, cudie, &x) < 0)
		return false;
	if (scope_index_find(x, pc, &top) < 0)
		return true;
	if (!descend(&top, pc, path, &depth))
		return false;
	for (k = (int)depth; k >= 0 && inlined < 0; k--)
		if (dwarf_tag(&path[k]) == DW_TAG_inlined_subroutine)
			inlined = k;
	if (inlined >= 0) {
		int r = origin_reached(x, cudie, &path[inlined]);

		if (r <= 0)
			return r == 0;
	}
	/* the innermost function, then each one's nearest function-like ancestor */
	for (k = (int)depth; k >= 0 && !is_function(&path[k]); k--)
		;
	while (k >= 0 && ret->n < FUNCTION_CHAIN_MAX) {
		ret->dies[ret->n++] = path[k];
		if (dwarf_tag(&path[k]) == DW_TAG_subprogram) {
			ret->complete = true;
			break;
		}
		for (k--; k >= 0 && !is_function(&path[k]); k--)
			;
	}
	return true;
}

void function_chain_find(CuIndex *units, Dwarf_Die *cudie, Dwarf_Addr pc, FunctionChain *ret)
{
	*ret = (FunctionChain){};
	if (!units || !chain_by_index(units, cudie, pc, ret))
		function_chain_by_libdw(cudie, pc, ret);
}
