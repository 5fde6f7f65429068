/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The function chain by scope indexes against libdw's own walk
 * (dwarf_getscopes() and dwarf_getscopes_die()): for real files (the C
 * library this test runs with, with its separate debug file; the workloads)
 * every probed address of every unit's line table gets the very same DIEs,
 * innermost first, and the same end. libdw is slow on big units, so at most
 * MAX_PROBES addresses per file, spread over all of them.
 * Usage: test-function-chain [MAX_PROBES] ELF...
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "cu-index.h"
#include "function-chain.h"
#include "offline-module.h"
#include "test-util.h"

typedef struct Probe {
	Dwarf_Die *cu; /* libdwfl's: lives as long as the module */
	Dwarf_Addr pc;
} Probe;

typedef struct Probes {
	Probe *p;
	size_t n, allocated;
} Probes;

static int collect(Dwfl_Module *mod, Probes *probes)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	while ((cu = dwfl_module_nextcu(mod, cu, &bias))) {
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_getsrclines(cu, &lines, &n) != 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			Dwarf_Addr pc;

			if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &pc) != 0)
				continue;
			if (ARRAY_RESERVE(probes->p, probes->allocated, probes->n + 1, 1024) < 0)
				return -1;
			probes->p[probes->n++] = (Probe){ .cu = cu, .pc = pc };
		}
	}
	return 0;
}

static bool same_chain(const FunctionChain *a, const FunctionChain *b)
{
	if (a->n != b->n || a->complete != b->complete)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (dwarf_dieoffset((Dwarf_Die *)&a->dies[i]) !=
		    dwarf_dieoffset((Dwarf_Die *)&b->dies[i]))
			return false;
	return true;
}

static void check_file(const char *path, size_t max_probes)
{
	_cleanup_free_ Probe *p = NULL;
	Probes probes = {};
	CuIndex *units = NULL;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	size_t step, probed = 0, named = 0, inlined = 0, broken = 0;
	int r;

	r = offline_module_open(path, &dwfl, &mod);
	CHECK(r == 0, "cannot load %s: %s", path, dwfl_errmsg(-1));
	if (r < 0)
		return;
	r = cu_index_new(mod, &units);
	CHECK(r == 0, "%s: cu_index_new: %d", path, r);
	CHECK(collect(mod, &probes) == 0, "%s: out of memory", path);
	p = probes.p;
	step = probes.n > max_probes ? probes.n / max_probes : 1;
	for (size_t i = 0; units && i < probes.n; i += step) {
		FunctionChain want, got;

		function_chain_by_libdw(p[i].cu, p[i].pc, &want);
		function_chain_find(units, p[i].cu, p[i].pc, &got);
		probed++;
		named += got.n > 0;
		inlined += got.n > 1;
		broken += got.n > 0 && !got.complete;
		CHECK(same_chain(&want, &got),
		      "%s: 0x%llx: %zu functions (%s, innermost at 0x%llx) by libdw, %zu (%s, "
		      "innermost at 0x%llx) by the index", path, (unsigned long long)p[i].pc,
		      want.n, want.complete ? "complete" : "broken off",
		      want.n ? (unsigned long long)dwarf_dieoffset(&want.dies[0]) : 0ULL, got.n,
		      got.complete ? "complete" : "broken off",
		      got.n ? (unsigned long long)dwarf_dieoffset(&got.dies[0]) : 0ULL);
	}
	printf("%s: %zu line addresses, %zu probed: %zu in a function, %zu with inlined frames, "
	       "%zu broken off\n", path, probes.n, probed, named, inlined, broken);
	/* a file whose DWARF went unread would pass vacuously */
	CHECK(named > 0, "%s: no probed address is in a function", path);
	cu_index_free(units);
	dwfl_end(dwfl);
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *libc = test_own_libc();
	size_t max_probes = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;

	CHECK(libc != NULL, "cannot find this process's C library");
	if (libc)
		check_file(libc, max_probes);
	for (int i = 2; i < argc; i++)
		check_file(argv[i], max_probes);
	return test_result();
}
