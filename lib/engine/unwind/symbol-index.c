/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "symbol-index.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "sorted.h"

/* Bounds of one lookup; past them libdwfl answers (never in ordinary code). */
#define LOOKUP_MAX_STEPS 4096U
#define LOOKUP_MAX_CANDIDATES 64U

typedef struct IndexedSymbol {
	uint64_t start, end; /* absolute, [start, end) */
	uint64_t max_end;    /* the largest end of this entry and all before it */
	uint32_t idx;        /* in libdwfl's symbol table */
} IndexedSymbol;

struct SymbolIndex {
	IndexedSymbol *symbols; /* sized symbols, sorted by start */
	size_t n, allocated;
	uint64_t *sizeless_globals; /* addresses of global labels without a size, sorted */
	size_t n_sizeless, sizeless_allocated;
	uint64_t lowest_sizeless; /* the lowest address of any label without a size */
	uint32_t global_start;  /* the first index libdwfl searches first */
	bool libdwfl_only;      /* symbols libdwfl adjusts, or no table: always ask it */
};

SymbolIndex *symbol_index_free(SymbolIndex *x)
{
	if (!x)
		return NULL;
	free(x->symbols);
	free(x->sizeless_globals);
	free(x);
	return NULL;
}

void symbol_index_freep(SymbolIndex **x)
{
	symbol_index_free(*x);
}

size_t symbol_index_bytes(const SymbolIndex *x)
{
	return x ? sizeof(*x) + x->allocated * sizeof(*x->symbols) +
			   x->sizeless_allocated * sizeof(*x->sizeless_globals) : 0;
}

/* The symbols dwfl_module_addrinfo() considers at all. */
static bool symbol_counts(const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION &&
	       type != STT_FILE && type != STT_TLS;
}

DEFINE_RADIX_SORT(radix_sort_by_start, IndexedSymbol, item->start)

/*
 * By start, radix sorted: a module's addresses differ in their low three bytes or so,
 * and qsort() took about a millisecond for libc's 8000 symbols, a third of what a new
 * unwinder spends opening libc for naming. Stable: symbols at one address keep table order.
 */
static int sort_by_start(IndexedSymbol *symbols, size_t n)
{
	_cleanup_free_ IndexedSymbol *tmp = malloc(n * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	radix_sort_by_start(symbols, tmp, n);
	return 0;
}

static int u64_compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int add_symbol(SymbolIndex *x, uint32_t idx, uint64_t value, const GElf_Sym *sym)
{
	if (sym->st_size == 0) {
		if (value < x->lowest_sizeless)
			x->lowest_sizeless = value;
		/* only a global one at the very address changes what libdwfl does */
		if (idx < x->global_start)
			return 0;
		if (ARRAY_RESERVE(x->sizeless_globals, x->sizeless_allocated, x->n_sizeless + 1, 64) < 0)
			return -ENOMEM;
		x->sizeless_globals[x->n_sizeless++] = value;
		return 0;
	}
	if (ARRAY_RESERVE(x->symbols, x->allocated, x->n + 1, 256) < 0)
		return -ENOMEM;
	x->symbols[x->n++] = (IndexedSymbol){
		.start = value,
		.end = value + sym->st_size < value ? UINT64_MAX : value + sym->st_size,
		.idx = idx,
	};
	return 0;
}

static int module_machine(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr ehdr;

	return elf && gelf_getehdr(elf, &ehdr) ? ehdr.e_machine : EM_NONE;
}

int symbol_index_build(Dwfl_Module *mod, SymbolIndex **ret)
{
	_cleanup_(symbol_index_freep) SymbolIndex *x = calloc(1, sizeof(*x));
	int n = dwfl_module_getsymtab(mod);
	int first_global = dwfl_module_getsymtab_first_global(mod);
	int r;

	if (!x)
		return -ENOMEM;
	/* ppc64's function descriptors: libdwfl tries two values for such a symbol */
	x->libdwfl_only = n < 0 || first_global < 0 || module_machine(mod) == EM_PPC64;
	x->global_start = first_global > 0 ? (uint32_t)first_global : 1;
	x->lowest_sizeless = UINT64_MAX;
	for (int i = 1; !x->libdwfl_only && i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);

		if (!symbol_counts(name, &sym))
			continue;
		r = add_symbol(x, (uint32_t)i, value, &sym);
		if (r < 0)
			return r;
	}
	if (x->n > 0) {
		r = sort_by_start(x->symbols, x->n);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < x->n; i++)
		x->symbols[i].max_end = i == 0 || x->symbols[i].end > x->symbols[i - 1].max_end ?
						x->symbols[i].end : x->symbols[i - 1].max_end;
	if (x->n_sizeless > 0)
		qsort(x->sizeless_globals, x->n_sizeless, sizeof(uint64_t), u64_compare);
	*ret = TAKE_PTR(x);
	return 0;
}

/* GELF_ST_BIND as higher-is-better, as libdwfl ranks it. */
static int binding_value(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

typedef struct Choice {
	const char *name;
	GElf_Sym sym;
	uint64_t value;
} Choice;

/* libdwfl's try_sym_value() for a sized symbol holding the address. */
static void choose(Choice *c, const char *name, const GElf_Sym *sym, uint64_t value)
{
	int bound = binding_value(sym), chosen = c->name ? binding_value(&c->sym) : 0;

	if (!c->name || c->value < value || chosen < bound ||
	    (c->value == value && ((c->sym.st_size > sym->st_size && chosen <= bound) ||
				   (c->sym.st_size >= sym->st_size && chosen < bound))))
		*c = (Choice){ .name = name, .sym = *sym, .value = value };
}

/* The best of the candidates with table index in [from, to), in table order. */
static const char *choose_among(Dwfl_Module *mod, const uint32_t *idx, size_t n, uint32_t from,
				uint32_t to)
{
	Choice c = {};

	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name;

		if (idx[i] < from || idx[i] >= to)
			continue;
		name = dwfl_module_getsym_info(mod, (int)idx[i], &sym, &value, NULL, NULL, NULL);
		if (name)
			choose(&c, name, &sym, value);
	}
	return c.name;
}

static int idx_compare(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool has_sizeless_global_at(const SymbolIndex *x, uint64_t addr)
{
	const uint64_t *a = x->sizeless_globals;

	return a && bsearch(&addr, a, x->n_sizeless, sizeof(uint64_t), u64_compare);
}

int symbol_index_lookup(const SymbolIndex *x, Dwfl_Module *mod, uint64_t addr,
			const char **ret_name)
{
	uint32_t candidates[LOOKUP_MAX_CANDIDATES];
	size_t n = 0, steps = 0;
	const char *name;

	if (x->libdwfl_only)
		return -EAGAIN;
	/* the sized symbols holding addr: none before one whose max_end is at or below it */
	for (size_t i = SORTED_UPPER_BOUND(x->symbols, x->n, start, addr);
	     i > 0 && x->symbols[i - 1].max_end > addr; i--) {
		if (++steps > LOOKUP_MAX_STEPS)
			return -EAGAIN;
		if (x->symbols[i - 1].end <= addr)
			continue;
		if (n == LOOKUP_MAX_CANDIDATES)
			return -EAGAIN;
		candidates[n++] = x->symbols[i - 1].idx;
	}
	qsort(candidates, n, sizeof(uint32_t), idx_compare);
	/* the globals first; the locals unless a global label sits at the very address */
	name = choose_among(mod, candidates, n, x->global_start, UINT32_MAX);
	if (!name && !has_sizeless_global_at(x, addr))
		name = choose_among(mod, candidates, n, 1, x->global_start);
	/* with no label at or below it either, libdwfl finds nothing */
	if (!name)
		return addr < x->lowest_sizeless ? -ENOENT : -EAGAIN;
	*ret_name = name;
	return 0;
}
