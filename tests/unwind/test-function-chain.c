/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The function chain by scope indexes against libdw's own walk
 * (dwarf_getscopes() and dwarf_getscopes_die()): for real files (the C
 * library this test runs with, with its separate debug file; the workloads)
 * every probed address of every unit's line table gets the very same DIEs,
 * innermost first, and the same end. Also the unit and line naming finds for
 * the address (cu-index.h, from .debug_aranges read directly) against
 * libdwfl's (dwfl_module_addrdie(), dwfl_module_getsrc()). libdw is slow on big units, so at most
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
	Dwarf_Addr pc, bias;
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
			probes->p[probes->n++] = (Probe){ .cu = cu, .pc = pc, .bias = bias };
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

/*
 * The unit and line of 'p' by the index: libdwfl's where libdwfl finds one
 * (through .debug_aranges); else a unit whose ranges hold the address, or
 * none when the probe's own unit does not (the end of a line sequence).
 */
static void check_unit(Dwfl_Module *mod, CuIndex *units, const Probe *p, const char *path)
{
	Dwarf_Addr abs = p->pc + p->bias, bias = 0, dwfl_bias;
	Dwarf_Die *want = dwfl_module_addrdie(mod, abs, &dwfl_bias);
	Dwarf_Die *got = cu_index_find(units, abs, &bias);
	Dwfl_Line *want_line = dwfl_module_getsrc(mod, abs);
	Dwarf_Line *got_line;
	Dwarf_Addr line_addr;
	int want_no = 0, got_no = 0;

	if (want)
		CHECK(got && dwarf_dieoffset(got) == dwarf_dieoffset(want) && bias == p->bias,
		      "%s: 0x%llx: unit 0x%llx by the index, 0x%llx by libdwfl", path,
		      (unsigned long long)p->pc,
		      got ? (unsigned long long)dwarf_dieoffset(got) : 0ULL,
		      (unsigned long long)dwarf_dieoffset(want));
	else
		CHECK(got ? dwarf_haspc(got, p->pc) > 0 && bias == p->bias
			  : dwarf_haspc(p->cu, p->pc) <= 0,
		      "%s: 0x%llx: unit 0x%llx by the index, none by libdwfl, its line's unit "
		      "0x%llx", path, (unsigned long long)p->pc,
		      got ? (unsigned long long)dwarf_dieoffset(got) : 0ULL,
		      (unsigned long long)dwarf_dieoffset(p->cu));
	if (!got || !want_line)
		return;
	got_line = dwarf_getsrc_die(got, abs - bias);
	CHECK(got_line && dwarf_lineaddr(got_line, &line_addr) == 0, "%s: 0x%llx: no line",
	      path, (unsigned long long)p->pc);
	if (!got_line)
		return;
	dwfl_lineinfo(want_line, NULL, &want_no, NULL, NULL, NULL);
	dwarf_lineno(got_line, &got_no);
	CHECK(want_no == got_no && strcmp(dwfl_lineinfo(want_line, NULL, NULL, NULL, NULL, NULL),
					  dwarf_linesrc(got_line, NULL, NULL)) == 0,
	      "%s: 0x%llx: line %d by the index, %d by libdwfl", path, (unsigned long long)p->pc,
	      got_no, want_no);
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

		check_unit(mod, units, &p[i], path);
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
