/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-function-chain ELF [PROBES]: CPU per address of finding the
 * functions at an address (function-chain.h) by libdw's dwarf_getscopes()
 * walk and by the units' scope indexes, over PROBES (default 1000) addresses
 * spread over every unit's line table, in the same run; the indexes' cold
 * figure includes building each unit's index on its first address.
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cleanup.h"
#include "cu-index.h"
#include "function-chain.h"
#include "offline-module.h"

typedef struct Probe {
	Dwarf_Die *cu;
	Dwarf_Addr pc;
} Probe;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Every 'step'-th line address of the module, at most 'max'. */
static size_t collect(Dwfl_Module *mod, size_t max, Probe *probes)
{
	size_t total = 0, n = 0, step;
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	while ((cu = dwfl_module_nextcu(mod, cu, &bias))) {
		Dwarf_Lines *lines;
		size_t k;

		if (dwarf_getsrclines(cu, &lines, &k) == 0)
			total += k;
	}
	step = total > max ? total / max : 1;
	total = 0;
	while ((cu = dwfl_module_nextcu(mod, cu, &bias))) {
		Dwarf_Lines *lines;
		size_t k;

		if (dwarf_getsrclines(cu, &lines, &k) != 0)
			continue;
		for (size_t i = 0; i < k; i++, total++)
			if (total % step == 0 && n < max &&
			    dwarf_lineaddr(dwarf_onesrcline(lines, i), &probes[n].pc) == 0)
				probes[n++].cu = cu;
	}
	return n;
}

int main(int argc, char **argv)
{
	size_t max = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000, n, inlined = 0;
	_cleanup_free_ Probe *probes = NULL;
	CuIndex *units = NULL;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	double t0, libdw_ms, cold_ms, warm_ms;
	FunctionChain chain;

	if (argc < 2 || max == 0) {
		fprintf(stderr, "usage: bench-function-chain ELF [PROBES]\n");
		return 2;
	}
	probes = calloc(max, sizeof(Probe));
	if (!probes)
		return 1;
	if (offline_module_open(argv[1], &dwfl, &mod) < 0 || cu_index_new(mod, &units) < 0) {
		fprintf(stderr, "cannot load '%s': %s\n", argv[1], dwfl_errmsg(-1));
		return 1;
	}
	n = collect(mod, max, probes);
	if (n == 0)
		return 1;
	/* libdw's line tables and abbreviations read before either is timed */
	for (size_t i = 0; i < n; i++)
		function_chain_by_libdw(probes[i].cu, probes[i].pc, &chain);
	t0 = cpu_ms();
	for (size_t i = 0; i < n; i++)
		function_chain_by_libdw(probes[i].cu, probes[i].pc, &chain);
	libdw_ms = cpu_ms() - t0;
	t0 = cpu_ms();
	for (size_t i = 0; i < n; i++) {
		function_chain_find(units, probes[i].cu, probes[i].pc, &chain);
		inlined += chain.n > 1;
	}
	cold_ms = cpu_ms() - t0;
	t0 = cpu_ms();
	for (size_t i = 0; i < n; i++)
		function_chain_find(units, probes[i].cu, probes[i].pc, &chain);
	warm_ms = cpu_ms() - t0;
	printf("%s: %zu addresses (%zu with inlined frames): libdw %.4f ms/address, index "
	       "cold %.4f ms/address (building each unit's index on first use), warm %.4f "
	       "ms/address; libdw/index cold %.1fx, warm %.1fx\n", argv[1], n, inlined,
	       libdw_ms / n, cold_ms / n, warm_ms / n, libdw_ms / cold_ms, libdw_ms / warm_ms);
	cu_index_free(units);
	dwfl_end(dwfl);
	return 0;
}
