/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "plt-names.h"

#include <string.h>

/* x86-64: 16-byte entries; .plt starts with the resolver's own entry unless .plt.sec holds them */
#define PLT_ENTRY_SIZE 16

static Elf_Scn *find_section(Elf *elf, size_t shstrndx, const char *name, GElf_Shdr *ret)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		const char *n;

		if (!gelf_getshdr(scn, ret))
			continue;
		n = elf_strptr(elf, shstrndx, ret->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

const char *plt_entry_function(Elf *elf, uint64_t addr)
{
	GElf_Shdr plt, rela, dynsym;
	Elf_Scn *rela_scn, *sym_scn;
	Elf_Data *rela_data, *sym_data;
	GElf_Rela r;
	GElf_Sym sym;
	size_t shstrndx;
	uint64_t index;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	/* with IBT, the entries called are in .plt.sec, from index 0 */
	if (find_section(elf, shstrndx, ".plt.sec", &plt) && addr >= plt.sh_addr &&
	    addr - plt.sh_addr < plt.sh_size)
		index = (addr - plt.sh_addr) / PLT_ENTRY_SIZE;
	else if (find_section(elf, shstrndx, ".plt", &plt) && addr >= plt.sh_addr + PLT_ENTRY_SIZE &&
		 addr - plt.sh_addr < plt.sh_size)
		index = (addr - plt.sh_addr) / PLT_ENTRY_SIZE - 1;
	else
		return NULL;
	rela_scn = find_section(elf, shstrndx, ".rela.plt", &rela);
	if (!rela_scn || rela.sh_type != SHT_RELA || rela.sh_entsize == 0 ||
	    index >= rela.sh_size / rela.sh_entsize)
		return NULL;
	rela_data = elf_getdata(rela_scn, NULL);
	sym_scn = elf_getscn(elf, rela.sh_link);
	if (!rela_data || !sym_scn || !gelf_getshdr(sym_scn, &dynsym) ||
	    !gelf_getrela(rela_data, (int)index, &r))
		return NULL;
	sym_data = elf_getdata(sym_scn, NULL);
	if (!sym_data || GELF_R_SYM(r.r_info) == 0 ||
	    !gelf_getsym(sym_data, (int)GELF_R_SYM(r.r_info), &sym))
		return NULL;
	return elf_strptr(elf, dynsym.sh_link, sym.st_name);
}
