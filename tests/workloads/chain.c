/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libworkload-chain.so: a plugin for workload-dlopen (plugin_hot) whose time
 * goes to a static function (named by DWARF or .symtab only), to an exported
 * one (in .dynsym too) and to the PLT stub the library calls that exported
 * one through (named by nothing but .rela.plt). Built as is and stripped to
 * .symtab and to .dynsym, it shows each level of the naming chain.
 */
#include "spin.h"

__attribute__((noinline)) uint64_t plugin_hot(uint64_t ns);
__attribute__((noinline)) uint64_t chain_exported(uint64_t x);

/* exported, so a call to it from here goes through the PLT (it could be interposed) */
uint64_t chain_exported(uint64_t x)
{
	return x * 3 + 1;
}

static __attribute__((noinline)) uint64_t chain_static(uint64_t x)
{
	for (int i = 0; i < 64; i++)
		x = workload_mix(x + (uint64_t)i);
	return x;
}

uint64_t plugin_hot(uint64_t ns)
{
	uint64_t end = workload_now_ns() + ns, x = 11;

	while (workload_now_ns() < end) {
		x = chain_static(x);
		for (int i = 0; i < 256; i++)
			x = chain_exported(x);
	}
	return x;
}
