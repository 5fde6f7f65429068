/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SymbolIndex against libdwfl itself: for real ELF files (the C library this
 * test runs with, this test's own binary with its local symbols, a plugin
 * with .symtab and one with .dynsym only) the index names every probed
 * address as dwfl_module_addrinfo() does (nothing too), or defers to it; and
 * it answers by itself for every byte of a function (else it would save nothing).
 * Usage: test-symbol-index [ELF...]
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "offline-module.h"
#include "symbol-index.h"
#include "test-util.h"

/* Symbols probed per file, spread over its table: libdwfl's lookups are the slow part. */
#define MAX_PROBED_SYMBOLS 1500

typedef struct Tally {
	unsigned probed, answered, inside, inside_answered;
} Tally;

/* 'inside': a byte of a sized function, which the index must name by itself. */
static void probe(const SymbolIndex *x, Dwfl_Module *mod, uint64_t addr, bool inside,
		  const char *file, Tally *t)
{
	const char *want, *got = NULL;
	GElf_Off offset;
	GElf_Sym sym;
	int r;

	want = dwfl_module_addrinfo(mod, addr, &offset, &sym, NULL, NULL, NULL);
	r = symbol_index_lookup(x, mod, addr, &got);
	t->probed++;
	t->inside += inside;
	if (r == -EAGAIN)
		return;
	t->answered++;
	if (r == -ENOENT) {
		CHECK(!want, "%s: 0x%llx named nothing by the index, '%s' by libdwfl", file,
		      (unsigned long long)addr, want);
		return;
	}
	t->inside_answered += inside;
	CHECK(r == 0 && want && got && strcmp(want, got) == 0,
	      "%s: 0x%llx named '%s' by the index, '%s' by libdwfl (r=%d)", file,
	      (unsigned long long)addr, got ? got : "(null)", want ? want : "(null)", r);
}

/* Start, middle, last byte and one past the end of each probed symbol, and the gap below it. */
static void check_file(const char *path)
{
	_cleanup_(symbol_index_freep) SymbolIndex *x = NULL;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Tally t = {};
	int n, step, r;

	r = offline_module_open(path, &dwfl, &mod);
	CHECK(r == 0, "cannot load %s: %s", path, dwfl_errmsg(-1));
	if (r < 0)
		return;
	r = symbol_index_build(mod, &x);
	CHECK(r == 0, "%s: symbol_index_build: %s", path, strerror(-r));
	n = dwfl_module_getsymtab(mod);
	step = n > MAX_PROBED_SYMBOLS ? n / MAX_PROBED_SYMBOLS : 1;
	for (int i = 1; x && i < n; i += step) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
			continue;
		probe(x, mod, value, sym.st_size > 0, path, &t);
		probe(x, mod, value + sym.st_size / 2, sym.st_size > 0, path, &t);
		if (sym.st_size > 0) {
			probe(x, mod, value + sym.st_size - 1, true, path, &t);
			probe(x, mod, value + sym.st_size, false, path, &t);
		}
		if (value > 0)
			probe(x, mod, value - 1, false, path, &t);
	}
	printf("%s: %d symbols, %u addresses probed, %u named by the index (%u of %u inside "
	       "functions), %zu bytes\n", path, n, t.probed, t.answered, t.inside_answered, t.inside,
	       symbol_index_bytes(x));
	CHECK(t.inside >= 3, "%s: only %u addresses inside functions probed", path, t.inside);
	/* a byte of a sized function: the index names it without libdwfl */
	CHECK(t.inside_answered == t.inside, "%s: the index named only %u of %u addresses inside "
	      "functions", path, t.inside_answered, t.inside);
	dwfl_end(dwfl);
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *libc = test_own_libc();

	CHECK(libc != NULL, "no libc.so in /proc/self/maps");
	if (libc)
		check_file(libc);
	check_file("/proc/self/exe");
	for (int i = 1; i < argc; i++)
		check_file(argv[i]);
	return test_result();
}
