/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "scope-index.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "sorted.h"

/* Deeper nesting (of imported units, of scopes) is left to libdw. */
#define IMPORT_DEPTH_MAX 16
#define SCOPE_DEPTH_MAX 256

typedef struct TopRange {
	uint64_t low, high; /* [low, high), as dwarf_ranges() gives them */
	uint64_t max_high;  /* the highest 'high' of this and every range before it */
	size_t order;       /* of its DIE in the walk */
	Dwarf_Die die;
} TopRange;

struct ScopeIndex {
	TopRange *ranges; /* sorted by low */
	size_t n_ranges, allocated_ranges;
	const void **subprograms; /* DIE addresses, sorted */
	size_t n_subprograms, allocated_subprograms;
	size_t n_top;
};

ScopeIndex *scope_index_free(ScopeIndex *x)
{
	if (!x)
		return NULL;
	free(x->ranges);
	free(x->subprograms);
	free(x);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(ScopeIndex *, scope_index_free);

/* As libdw's __libdw_visit_scopes. */
bool scope_may_have_scopes(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

static int add_top(ScopeIndex *x, Dwarf_Die *die)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	size_t order = x->n_top++;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		if (ARRAY_RESERVE(x->ranges, x->allocated_ranges, x->n_ranges + 1, 256) < 0)
			return -ENOMEM;
		x->ranges[x->n_ranges++] = (TopRange){
			.low = start, .high = end, .order = order, .die = *die
		};
	}
	return off < 0 ? -EBADMSG : 0;
}

/* The unit's children as libdw's walk meets them: an imported unit's children in its place. */
static int add_children(ScopeIndex *x, Dwarf_Die *parent, const void **imports, unsigned n_imports)
{
	Dwarf_Die child;
	int r = dwarf_child(parent, &child);

	if (r != 0)
		return r < 0 ? -EBADMSG : 0;
	do {
		if (dwarf_tag(&child) == DW_TAG_imported_unit) {
			Dwarf_Attribute attr;
			Dwarf_Die unit;

			if (!dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &attr), &unit))
				continue;
			for (unsigned i = 0; i < n_imports; i++)
				if (imports[i] == unit.addr)
					return -ELOOP; /* libdw's own rule decides */
			if (n_imports == IMPORT_DEPTH_MAX)
				return -ELOOP;
			imports[n_imports] = unit.addr;
			r = add_children(x, &unit, imports, n_imports + 1);
		} else
			r = add_top(x, &child);
		if (r < 0)
			return r;
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	return r < 0 ? -EBADMSG : 0;
}

/* Every subprogram of the unit itself that libdw's walk reaches (imported units hold none of it). */
static int add_subprograms(ScopeIndex *x, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die child;
	int r;

	if (depth == SCOPE_DEPTH_MAX)
		return -ELOOP;
	r = dwarf_child(parent, &child);
	if (r != 0)
		return r < 0 ? -EBADMSG : 0;
	do {
		if (dwarf_tag(&child) == DW_TAG_imported_unit)
			continue;
		if (dwarf_tag(&child) == DW_TAG_subprogram) {
			if (ARRAY_RESERVE(x->subprograms, x->allocated_subprograms,
					  x->n_subprograms + 1, 256) < 0)
				return -ENOMEM;
			x->subprograms[x->n_subprograms++] = child.addr;
		}
		if (scope_may_have_scopes(&child) && dwarf_haschildren(&child) > 0) {
			r = add_subprograms(x, &child, depth + 1);
			if (r < 0)
				return r;
		}
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	return r < 0 ? -EBADMSG : 0;
}

static int range_compare(const void *a, const void *b)
{
	const TopRange *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int address_compare(const void *a, const void *b)
{
	const void *x = *(const void *const *)a, *y = *(const void *const *)b;

	return x < y ? -1 : x > y;
}

int scope_index_build(Dwarf_Die *cudie, ScopeIndex **ret)
{
	_cleanup_(scope_index_freep) ScopeIndex *x = calloc(1, sizeof(*x));
	const void *imports[IMPORT_DEPTH_MAX];
	uint64_t max_high = 0;
	int r;

	if (!x)
		return -ENOMEM;
	r = add_children(x, cudie, imports, 0);
	if (r < 0)
		return r;
	r = add_subprograms(x, cudie, 0);
	if (r < 0)
		return r;
	if (x->n_ranges > 0)
		qsort(x->ranges, x->n_ranges, sizeof(TopRange), range_compare);
	for (size_t i = 0; i < x->n_ranges; i++) {
		if (x->ranges[i].high > max_high)
			max_high = x->ranges[i].high;
		x->ranges[i].max_high = max_high;
	}
	if (x->n_subprograms > 0)
		qsort(x->subprograms, x->n_subprograms, sizeof(void *), address_compare);
	*ret = TAKE_PTR(x);
	return 0;
}

int scope_index_find(const ScopeIndex *x, Dwarf_Addr pc, Dwarf_Die *ret)
{
	/* ranges starting at or below pc, back while one of them may still reach past it */
	size_t i = SORTED_UPPER_BOUND(x->ranges, x->n_ranges, low, pc);
	const TopRange *best = NULL;

	while (i > 0 && x->ranges[i - 1].max_high > pc) {
		const TopRange *t = &x->ranges[--i];

		if (pc < t->high && (!best || t->order < best->order))
			best = t;
	}
	if (!best)
		return -ENOENT;
	*ret = best->die;
	return 0;
}

bool scope_index_reaches(const ScopeIndex *x, const Dwarf_Die *die)
{
	return x->n_subprograms > 0 && bsearch(&die->addr, x->subprograms, x->n_subprograms,
					       sizeof(void *), address_compare);
}
