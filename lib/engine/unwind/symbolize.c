/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "demangle.h"
#include "function-chain.h"
#include "module-naming.h"
#include "plt-names.h"

_Static_assert(FUNCTION_CHAIN_MAX == SYMBOLIZE_MAX_INLINE, "a frame per function of a chain");

typedef struct FrameBuilder {
	SymbolFrame frames[SYMBOLIZE_MAX_INLINE];
	char *owned[SYMBOLIZE_MAX_INLINE]; /* demangled names to free once stored */
	size_t n;
} FrameBuilder;

static void frame_builder_done(FrameBuilder *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->owned[i]);
}

/* Take 'name', demangled when it is a C++ symbol. */
static void frame_builder_add(FrameBuilder *b, const char *name, const char *file, uint32_t line,
			      bool inlined)
{
	char *demangled;

	if (b->n >= SYMBOLIZE_MAX_INLINE)
		return;
	demangled = symbol_demangle(name);
	b->owned[b->n] = demangled;
	b->frames[b->n++] = (SymbolFrame){
		.function = demangled ?: name,
		.file = file,
		.line = line,
		.inlined = inlined,
	};
}

/* A string attribute, following abstract origins and specifications. */
static const char *die_string(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

/*
 * A C++ function by its mangled linkage name (demangled later, with its
 * parameters); anything else by its source name, not an asm alias such as
 * glibc's "__GI___clock_gettime". Follows abstract origins and specifications.
 */
static const char *die_function_name(Dwarf_Die *die)
{
	const char *linkage, *name;

	linkage = die_string(die, DW_AT_linkage_name) ?: die_string(die, DW_AT_MIPS_linkage_name);
	if (linkage && strncmp(linkage, "_Z", 2) == 0)
		return linkage;
	name = die_string(die, DW_AT_name);
	return name ?: linkage;
}

/* Where an inlined subroutine was called from: its DW_AT_call_file/line. */
static void die_call_site(Dwarf_Die *cudie, Dwarf_Die *inlined, const char **ret_file,
			  uint32_t *ret_line)
{
	Dwarf_Attribute attr;
	Dwarf_Word file_idx = 0, line = 0;
	Dwarf_Files *files;
	size_t n_files;

	*ret_file = NULL;
	*ret_line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &line) == 0)
		*ret_line = (uint32_t)line;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &file_idx) == 0 &&
	    dwarf_getsrcfiles(cudie, &files, &n_files) == 0 && file_idx < n_files)
		*ret_file = dwarf_filesrc(files, file_idx, NULL, NULL);
}

/* The module's units (cu-index.h), built on first use; NULL: none could be. */
static CuIndex *units_of(Dwfl_Module *mod, ModuleInfo *info)
{
	if (!info->cu_index_built) {
		info->cu_index_built = true;
		if (cu_index_new(mod, &info->cu_index) < 0)
			info->cu_index = NULL;
	}
	return info->cu_index;
}

/* The compile unit holding 'addr' (cu-index.h: not libdwfl's, which reads all of libc's units). */
static Dwarf_Die *find_cu(Dwfl_Module *mod, ModuleInfo *info, uint64_t addr, Dwarf_Addr *ret_bias)
{
	CuIndex *units = units_of(mod, info);

	return units ? cu_index_find(units, addr, ret_bias) : NULL;
}

/* The line table's file:line for 'addr' in its unit. */
static const char *find_line(Dwarf_Die *cu, Dwarf_Addr bias, uint64_t addr, uint32_t *ret_line)
{
	Dwarf_Line *line = cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
	const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	int l = 0;

	if (file && dwarf_lineno(line, &l) < 0)
		l = 0;
	*ret_line = file && l > 0 ? (uint32_t)l : 0;
	return file;
}

/*
 * The frames at 'addr', innermost first: each DW_TAG_inlined_subroutine is an
 * inlined frame named after its abstract origin; the subprogram holding them
 * is the real frame. The innermost frame's line comes from the line table,
 * each outer one's from the call site of the frame inside it. The functions
 * come from the unit's scope index (function-chain.h): libdw's
 * dwarf_getscopes() walks the whole unit for every address.
 */
static void add_dwarf_frames(FrameBuilder *b, Dwfl_Module *mod, ModuleInfo *info, uint64_t addr,
			     const char *symbol)
{
	FunctionChain chain = {};
	Dwarf_Die *cudie;
	Dwarf_Addr bias = 0;
	const char *file;
	uint32_t lineno;

	cudie = find_cu(mod, info, addr, &bias);
	file = find_line(cudie, bias, addr, &lineno);
	if (cudie)
		function_chain_find(units_of(mod, info), cudie, addr - bias, &chain);
	if (chain.n == 0) {
		/* no DWARF for this code: the symbol alone */
		if (symbol)
			frame_builder_add(b, symbol, file, lineno, false);
		return;
	}
	for (size_t i = 0; i < chain.n && b->n < SYMBOLIZE_MAX_INLINE; i++) {
		Dwarf_Die *die = &chain.dies[i];
		const char *name = die_function_name(die);

		if (dwarf_tag(die) == DW_TAG_subprogram) {
			frame_builder_add(b, name ?: symbol ?: "[unknown]", file, lineno, false);
			return;
		}
		frame_builder_add(b, name ?: "[unknown]", file, lineno, true);
		die_call_site(cudie, die, &file, &lineno);
	}
	/* the chain broke off: the symbol still names the real function */
	if (symbol)
		frame_builder_add(b, symbol, file, lineno, false);
}

/* The symbol holding 'addr', by the module's index where it can tell, else by libdwfl. */
static const char *find_symbol(Dwfl_Module *mod, ModuleInfo *info, uint64_t addr)
{
	GElf_Off offset;
	GElf_Sym sym;
	const char *name;

	if (!info->symbol_index_built) {
		info->symbol_index_built = true;
		if (symbol_index_build(mod, &info->symbol_index) < 0)
			info->symbol_index = NULL;
	}
	switch (info->symbol_index ? symbol_index_lookup(info->symbol_index, mod, addr, &name) : -EAGAIN) {
	case 0:
		return name;
	case -ENOENT:
		return NULL;
	default:
		return dwfl_module_addrinfo(mod, addr, &offset, &sym, NULL, NULL, NULL);
	}
}

/* Name 'addr' of 'mod' from its symbols and DWARF, and store the frames in its SymbolModule. */
static int name_address(Dwfl_Module *mod, ModuleInfo *info, uint64_t addr,
			const SymbolFrame **ret_frames, size_t *ret_n)
{
	uint64_t rel = addr - info->bias;
	_cleanup_free_ char *unversioned = NULL;
	FrameBuilder b = {};
	const char *symbol, *version;
	int r;

	symbol = find_symbol(mod, info, addr);
	if (!symbol) {
		Dwarf_Addr elf_bias;
		Elf *elf = dwfl_module_getelf(mod, &elf_bias);
		const char *plt = plt_entry_function(elf, addr - elf_bias);

		/* "memcpy@plt", as perf names a PLT stub */
		if (plt && asprintf(&unversioned, "%s@plt", plt) < 0)
			return -ENOMEM;
		symbol = unversioned;
	}
	/* "memcpy@@GLIBC_2.14": the version is not part of the name, as in perf */
	else if ((version = strchr(symbol, '@'))) {
		unversioned = strndup(symbol, (size_t)(version - symbol));
		if (!unversioned)
			return -ENOMEM;
		symbol = unversioned;
	}
	add_dwarf_frames(&b, mod, info, addr, symbol);
	if (b.n == 0)
		return -ENOENT;
	r = symbol_module_insert(info->module, rel, b.frames, b.n, ret_frames);
	if (r >= 0)
		*ret_n = b.n;
	frame_builder_done(&b);
	return r < 0 ? r : 0;
}

/* The module's naming Dwfl (module-naming.h), made on its first unknown address; NULL: none. */
static ModuleNaming *naming_of(ModuleInfo *info)
{
	ModuleNaming *n = symbol_module_get_naming(info->module);

	if (n || info->naming_failed)
		return n;
	if (module_naming_new(info, &n) < 0) {
		info->naming_failed = true;
		return NULL;
	}
	return symbol_module_set_naming(info->module, n);
}

int symbolize_address(Dwfl_Module *mod, ModuleInfo *info, uint64_t addr,
		      const SymbolFrame **ret_frames, size_t *ret_n)
{
	uint64_t rel = addr - info->bias;
	ModuleNaming *naming;
	ModuleInfo *at;
	int r;

	if (symbol_module_lookup(info->module, rel, ret_frames, ret_n))
		return 0;
	naming = naming_of(info);
	if (!naming)
		return name_address(mod, info, addr, ret_frames, ret_n);
	/* the same file where the naming Dwfl has it: the same module address */
	mod = module_naming_lock(naming, &at);
	r = name_address(mod, at, rel + at->bias, ret_frames, ret_n);
	module_naming_unlock(naming);
	return r;
}
