/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cu-index.h"

#include <elfutils/libdw.h>
#include <endian.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "debug-aranges.h"
#include "sorted.h"

typedef struct CuRange {
	uint64_t low, high; /* absolute, [low, high) */
	uint64_t unit;      /* from .debug_aranges: the unit's header, its DIE looked up on first use */
	Dwarf_Die die;      /* the unit DIE; .addr NULL while not looked up */
	bool failed;        /* 'unit' is no unit */
} CuRange;

typedef struct CuRanges {
	CuRange *r; /* sorted by low */
	size_t n, allocated;
	bool read;
} CuRanges;

typedef struct UnitScopes {
	const void *unit;    /* the unit DIE's address: unique across a module's files */
	ScopeIndex *scopes;  /* NULL: its build failed with 'error' */
	int error;
} UnitScopes;

struct CuIndex {
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	CuRanges aranges; /* .debug_aranges, read on the first cu_index_find() */
	CuRanges ranges;  /* every unit's ranges, read on the first address aranges do not cover */
	UnitScopes *units; /* sorted by unit */
	size_t n_units, allocated_units;
};

CuIndex *cu_index_free(CuIndex *x)
{
	if (!x)
		return NULL;
	free(x->aranges.r);
	free(x->ranges.r);
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

static int add_range(CuRanges *to, uint64_t low, uint64_t high, uint64_t unit,
		     const Dwarf_Die *die)
{
	if (ARRAY_RESERVE(to->r, to->allocated, to->n + 1, 64) < 0)
		return -ENOMEM;
	to->r[to->n++] = (CuRange){ .low = low, .high = high, .unit = unit, .die = *die };
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

/* The section's bytes as libdw holds them (inflated when it opened the file). */
static Elf_Data *section_data(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &shdr) || !(n = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
		    strcmp(n, name) != 0)
			continue;
		if (shdr.sh_type == SHT_NOBITS || (shdr.sh_flags & SHF_COMPRESSED))
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* .debug_aranges (debug-aranges.h): the units are looked up only as addresses need them. */
static int read_aranges(CuIndex *x)
{
	static const Dwarf_Die none = {};
	_cleanup_free_ DebugArange *a = NULL;
	const unsigned char *ident;
	Dwarf_Addr bias;
	Elf_Data *data;
	Dwarf *dw;
	size_t n;
	int r;

	dw = dwfl_module_getdwarf(x->mod, &bias);
	if (!dw)
		return -ENOENT;
	ident = (const unsigned char *)elf_getident(dwarf_getelf(dw), NULL);
	if (!ident || ident[EI_DATA] != (BYTE_ORDER == LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB))
		return -EOPNOTSUPP;
	data = section_data(dwarf_getelf(dw), ".debug_aranges");
	if (!data || !data->d_buf)
		return -ENOENT;
	r = debug_aranges_parse(data->d_buf, data->d_size, &a, &n);
	if (r < 0)
		return r;
	x->bias = bias;
	for (size_t i = 0; i < n; i++) {
		r = add_range(&x->aranges, a[i].low + bias, a[i].high + bias, a[i].unit, &none);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Every unit's ranges: a few ms for libc's, so only for addresses .debug_aranges lacks. */
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
			r = add_range(&x->ranges, start + bias, end + bias, 0, cu);
			if (r < 0)
				return r;
		}
	}
	if (x->ranges.n > 0) /* a module without units has no array at all */
		qsort(x->ranges.r, x->ranges.n, sizeof(CuRange), range_compare);
	return 0;
}

/* The unit DIE of an aranges entry: dwarf_offdie() reads the unit headers up to it. */
static Dwarf_Die *range_die(CuIndex *x, CuRange *range)
{
	Dwarf_Addr bias;
	Dwarf_Off next;
	size_t header_size;
	Dwarf *dw;

	if (range->die.addr)
		return &range->die;
	if (range->failed)
		return NULL;
	range->failed = true;
	dw = dwfl_module_getdwarf(x->mod, &bias);
	if (!dw || dwarf_next_unit(dw, range->unit, &next, &header_size, NULL, NULL, NULL, NULL,
				   NULL, NULL) != 0 ||
	    !dwarf_offdie(dw, range->unit + header_size, &range->die))
		return NULL;
	range->failed = false;
	return &range->die;
}

/* The last range starting at or below addr, if it covers addr. */
static CuRange *ranges_find(CuRanges *in, uint64_t addr)
{
	size_t lo = SORTED_UPPER_BOUND(in->r, in->n, low, addr);

	return lo == 0 || addr >= in->r[lo - 1].high ? NULL : &in->r[lo - 1];
}

/*
 * The aranges entry for addr as libdwfl's dwfl_module_addrdie() finds it (so
 * that names stay what they were): the last one starting at or below addr,
 * also when addr is past its end but before the next one's start; past the
 * last one's end (itself included) nothing.
 */
static CuRange *aranges_find(CuRanges *in, uint64_t addr)
{
	size_t lo = SORTED_UPPER_BOUND(in->r, in->n, low, addr);

	return lo == 0 || (lo == in->n && addr > in->r[lo - 1].high) ? NULL : &in->r[lo - 1];
}

Dwarf_Die *cu_index_find(CuIndex *x, uint64_t addr, Dwarf_Addr *ret_bias)
{
	Dwarf_Die *die = NULL;
	CuRange *range;

	if (!x->aranges.read) {
		x->aranges.read = true;
		if (read_aranges(x) < 0)
			x->aranges.n = 0; /* none then, and not again */
	}
	range = aranges_find(&x->aranges, addr);
	if (range)
		die = range_die(x, range);
	if (!die) {
		if (!x->ranges.read) {
			x->ranges.read = true;
			if (read_ranges(x) < 0)
				x->ranges.n = 0;
		}
		range = ranges_find(&x->ranges, addr);
		die = range ? &range->die : NULL;
	}
	if (die)
		*ret_bias = x->bias;
	return die;
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
