/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cu-index.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "sorted.h"

typedef struct CuRange {
	uint64_t low, high; /* absolute, [low, high) */
	Dwarf_Die *cu;      /* libdwfl's own unit DIE: lives as long as the module */
} CuRange;

typedef struct UnitScopes {
	const void *unit;    /* the unit DIE's address: unique across a module's files */
	ScopeIndex *scopes;  /* NULL: its build failed with 'error' */
	int error;
} UnitScopes;

struct CuIndex {
	Dwfl_Module *mod;
	CuRange *ranges; /* sorted by low; read on the first cu_index_find() */
	size_t n, allocated;
	Dwarf_Addr bias;
	bool ranges_read;
	UnitScopes *units; /* sorted by unit */
	size_t n_units, allocated_units;
};

CuIndex *cu_index_free(CuIndex *x)
{
	if (!x)
		return NULL;
	free(x->ranges);
	for (size_t i = 0; i < x->n_units; i++)
		scope_index_free(x->units[i].scopes);
	free(x->units);
	free(x);
	return NULL;
}

static int range_compare(const void *a, const void *b)
{
	const CuRange *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

static int add_range(CuIndex *x, uint64_t low, uint64_t high, Dwarf_Die *cu)
{
	if (ARRAY_RESERVE(x->ranges, x->allocated, x->n + 1, 64) < 0)
		return -ENOMEM;
	x->ranges[x->n++] = (CuRange){ .low = low, .high = high, .cu = cu };
	return 0;
}

int cu_index_new(Dwfl_Module *mod, CuIndex **ret)
{
	CuIndex *x = calloc(1, sizeof(*x));

	if (!x)
		return -ENOMEM;
	x->mod = mod;
	*ret = x;
	return 0;
}

/* Every unit's ranges: a few ms for libc's, so only for modules libdw cannot find units of. */
static int read_ranges(CuIndex *x)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	int r;

	while ((cu = dwfl_module_nextcu(x->mod, cu, &bias))) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		x->bias = bias;
		while ((off = dwarf_ranges(cu, off, &base, &start, &end)) > 0) {
			if (end <= start)
				continue;
			r = add_range(x, start + bias, end + bias, cu);
			if (r < 0)
				return r;
		}
	}
	if (x->n > 0) /* a module without units has no array at all */
		qsort(x->ranges, x->n, sizeof(CuRange), range_compare);
	return 0;
}

Dwarf_Die *cu_index_find(CuIndex *x, uint64_t addr, Dwarf_Addr *ret_bias)
{
	size_t lo;

	if (!x->ranges_read) {
		x->ranges_read = true;
		if (read_ranges(x) < 0)
			x->n = 0; /* none found then, and not again */
	}
	/* the last range starting at or below addr */
	lo = SORTED_UPPER_BOUND(x->ranges, x->n, low, addr);

	if (lo == 0 || addr >= x->ranges[lo - 1].high)
		return NULL;
	*ret_bias = x->bias;
	return x->ranges[lo - 1].cu;
}

int cu_index_scopes(CuIndex *x, Dwarf_Die *cudie, const ScopeIndex **ret)
{
	size_t lo = 0, hi = x->n_units;
	UnitScopes *u;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((const char *)x->units[mid].unit < (const char *)cudie->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->n_units || x->units[lo].unit != cudie->addr) {
		if (ARRAY_RESERVE(x->units, x->allocated_units, x->n_units + 1, 16) < 0)
			return -ENOMEM;
		memmove(&x->units[lo + 1], &x->units[lo], (x->n_units - lo) * sizeof(UnitScopes));
		x->n_units++;
		u = &x->units[lo];
		*u = (UnitScopes){ .unit = cudie->addr };
		u->error = scope_index_build(cudie, &u->scopes);
		if (u->error < 0)
			u->scopes = NULL;
	}
	u = &x->units[lo];
	if (!u->scopes)
		return u->error;
	*ret = u->scopes;
	return 0;
}
