/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "address-space.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "hash.h"

#define DEFAULT_DEBUGINFO_PATH "-:.debug:/usr/lib/debug"
#define VDSO_NAME "[vdso]"

struct AddressSpace {
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks; /* libdwfl keeps pointers to these: they live here */
	char *debuginfo_path;
	SymbolCache *cache;
	uint64_t generation;      /* of the ProcessMaps last seen */
	uint64_t signature;       /* of the module list last reported */
	bool updated;
	int vdso_fd;              /* our own vDSO image: the kernel maps the same one everywhere */
	bool other_root;          /* the target's paths are under /proc/PID/root */
};

static ModuleInfo *module_info_free(ModuleInfo *m)
{
	if (!m)
		return NULL;
	free(m->path);
	free(m->build_id);
	cu_index_free(m->cu_index);
	free(m);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(ModuleInfo *, module_info_free);

static int free_module_userdata(Dwfl_Module *mod, void **userdata, const char *name,
				Dwarf_Addr start, void *arg)
{
	*userdata = module_info_free(*userdata);
	return DWARF_CB_OK;
}

AddressSpace *address_space_free(AddressSpace *s)
{
	if (!s)
		return NULL;
	if (s->dwfl) {
		dwfl_getmodules(s->dwfl, free_module_userdata, NULL, 0);
		dwfl_end(s->dwfl);
	}
	safe_close(s->vdso_fd);
	free(s->debuginfo_path);
	free(s);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(AddressSpace *, address_space_free);

int address_space_new(const char *debuginfo_path, SymbolCache *cache, AddressSpace **ret)
{
	_cleanup_(address_space_freep) AddressSpace *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->vdso_fd = -1;
	s->cache = cache;
	s->debuginfo_path = strdup(debuginfo_path ?: DEFAULT_DEBUGINFO_PATH);
	if (!s->debuginfo_path)
		return -ENOMEM;
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &s->debuginfo_path,
	};
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl)
		return -ENOMEM;
	*ret = TAKE_PTR(s);
	return 0;
}

Dwfl *address_space_get_dwfl(AddressSpace *s)
{
	return s->dwfl;
}

/* A memfd holding this process's vDSO, so libdwfl can read its symbols and CFI. */
static int vdso_open(AddressSpace *s)
{
	const Elf64_Ehdr *ehdr = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	_cleanup_close_ int fd = -1;
	size_t size;

	if (s->vdso_fd >= 0)
		return 0;
	if (!ehdr || memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOENT;
	/* the image ends with its section headers */
	size = ehdr->e_shoff + (size_t)ehdr->e_shnum * ehdr->e_shentsize;
	if (size < sizeof(*ehdr) || size > 1U << 20)
		return -EBADMSG;
	fd = memfd_create("profd-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	if (write(fd, ehdr, size) != (ssize_t)size)
		return -EIO;
	s->vdso_fd = TAKE_FD(fd);
	return 0;
}

static bool is_reportable(const ProcessMapping *m)
{
	return m->path && (m->path[0] == '/' || strcmp(m->path, VDSO_NAME) == 0);
}

/*
 * Mapped files come as runs of mappings (one per segment) of the same path.
 * Calls 'fn' for each run that holds code, with its first mapping and the
 * address its offset 0 would have: what dwfl_report_elf() calls the base of
 * an ET_DYN file.
 */
typedef int (*FileRunFn)(AddressSpace *s, const ProcessMaps *maps, const ProcessMapping *first,
			 uint64_t base, void *arg);

static int for_each_code_file(AddressSpace *s, const ProcessMaps *maps, FileRunFn fn, void *arg)
{
	for (size_t i = 0; i < maps->n_mappings;) {
		const ProcessMapping *first = &maps->mappings[i];
		bool exec = false;
		uint64_t base;
		size_t j;
		int r;

		if (!is_reportable(first)) {
			i++;
			continue;
		}
		base = first->start - first->pgoff;
		for (j = i; j < maps->n_mappings; j++) {
			const ProcessMapping *m = &maps->mappings[j];

			if (!m->path || strcmp(m->path, first->path) != 0 ||
			    m->inode != first->inode)
				break;
			/* a later mapping of offset 0 starts a new load of the same file */
			if (j > i && m->pgoff == 0)
				break;
			exec = exec || (m->prot & PROT_EXEC);
		}
		i = j;
		if (!exec)
			continue;
		r = fn(s, maps, first, base, arg);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_to_signature(AddressSpace *s, const ProcessMaps *maps, const ProcessMapping *first,
			    uint64_t base, void *arg)
{
	uint64_t *h = arg;

	*h = hash_combine(hash_string(*h, first->path), base);
	return 0;
}

typedef struct ReportState {
	ModuleInfo **old; /* modules before this update, to keep unchanged ones */
	size_t n_old;
} ReportState;

static int collect_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			  void *arg)
{
	ReportState *st = arg;
	ModuleInfo **a;

	if (!*userdata)
		return DWARF_CB_OK;
	a = reallocarray(st->old, st->n_old + 1, sizeof(ModuleInfo *));
	if (!a)
		return DWARF_CB_ABORT;
	st->old = a;
	st->old[st->n_old++] = *userdata;
	return DWARF_CB_OK;
}

static int module_info_new(AddressSpace *s, Dwfl_Module *mod, const char *path, uint64_t base,
			   ModuleInfo **ret)
{
	_cleanup_(module_info_freep) ModuleInfo *m = calloc(1, sizeof(*m));
	const unsigned char *bits;
	GElf_Addr vaddr;
	Dwarf_Addr start, end;
	int n, r;

	if (!m)
		return -ENOMEM;
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0) {
		m->build_id = malloc(2 * (size_t)n + 1);
		if (!m->build_id)
			return -ENOMEM;
		for (int i = 0; i < n; i++)
			sprintf(m->build_id + 2 * i, "%02x", bits[i]);
	}
	r = symbol_cache_intern(s->cache, m->build_id ?: m->path, &m->key);
	if (r < 0)
		return r;
	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	m->base = base;
	m->start = start;
	m->end = end;
	if (!dwfl_module_getelf(mod, &m->bias))
		m->bias = base;
	*ret = TAKE_PTR(m);
	return 0;
}

/* Does the target see another root than ours (a container)? Then its paths mean other files. */
static bool has_other_root(uint32_t pid)
{
	struct stat ours, theirs;
	char root[32];

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	if (pid == 0 || stat("/", &ours) < 0 || stat(root, &theirs) < 0)
		return false;
	return ours.st_dev != theirs.st_dev || ours.st_ino != theirs.st_ino;
}

/*
 * Report a mapped file by its path (seen through the target's root when it
 * has its own); when that no longer opens (deleted or replaced since),
 * through the kernel's handle on the mapping itself.
 */
static Dwfl_Module *report_elf_file(AddressSpace *s, const ProcessMaps *maps,
				    const ProcessMapping *first, uint64_t base)
{
	_cleanup_free_ char *rooted = NULL;
	char map_file[80];
	Dwfl_Module *mod;

	if (s->other_root && asprintf(&rooted, "/proc/%u/root%s", maps->pid, first->path) < 0)
		rooted = NULL;
	mod = dwfl_report_elf(s->dwfl, first->path, rooted ?: first->path, -1, base, false);
	if (mod || maps->pid == 0)
		return mod;
	snprintf(map_file, sizeof(map_file), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, maps->pid,
		 first->start, first->end);
	return dwfl_report_elf(s->dwfl, first->path, map_file, -1, base, false);
}

static int report_file(AddressSpace *s, const ProcessMaps *maps, const ProcessMapping *first,
		       uint64_t base, void *arg)
{
	const char *path = first->path;
	ReportState *st = arg;
	Dwfl_Module *mod;
	ModuleInfo *info = NULL;
	void **userdata;
	int r;

	for (size_t i = 0; i < st->n_old; i++) {
		ModuleInfo *o = st->old[i];

		if (o && o->base == base && strcmp(o->path, path) == 0) {
			/* the same name and range finds the existing module: no reopening */
			mod = dwfl_report_module(s->dwfl, path, o->start, o->end);
			if (mod) {
				st->old[i] = NULL;
				return 0;
			}
		}
	}
	if (strcmp(path, VDSO_NAME) == 0) {
		int fd;

		if (vdso_open(s) < 0)
			return 0;
		fd = fcntl(s->vdso_fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return 0;
		mod = dwfl_report_elf(s->dwfl, path, path, fd, base, false);
		if (!mod)
			safe_close(fd);
	} else
		mod = report_elf_file(s, maps, first, base);
	/* files that vanished or are not ELF stay nameless: their frames keep module+offset */
	if (!mod)
		return 0;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*userdata)
		return 0;
	r = module_info_new(s, mod, path, base, &info);
	if (r < 0)
		return r;
	*userdata = info;
	return 0;
}

/* libdwfl passes the address of the module's userdata slot, not its value (MODCB_ARGS) */
static int module_removed(Dwfl_Module *mod, void *userdata_slot, const char *name, Dwarf_Addr base,
			  void *arg)
{
	void **slot = userdata_slot;

	*slot = module_info_free(*slot);
	return DWARF_CB_OK;
}

int address_space_update(AddressSpace *s, const ProcessMaps *maps)
{
	ReportState st = {};
	uint64_t signature = 0;
	int r;

	if (s->updated && maps->generation == s->generation)
		return 0;
	/* anonymous mmaps change the generation too; only code files matter here */
	r = for_each_code_file(s, maps, add_to_signature, &signature);
	if (r < 0)
		return r;
	s->generation = maps->generation;
	if (s->updated && signature == s->signature)
		return 0;

	if (dwfl_getmodules(s->dwfl, collect_module, &st, 0) != 0) {
		free(st.old);
		return -ENOMEM;
	}
	s->other_root = has_other_root(maps->pid);
	dwfl_report_begin(s->dwfl);
	r = for_each_code_file(s, maps, report_file, &st);
	free(st.old);
	if (dwfl_report_end(s->dwfl, module_removed, NULL) != 0 && r >= 0)
		r = -EIO;
	if (r < 0)
		return r;
	s->signature = signature;
	s->updated = true;
	return 1;
}

Dwfl_Module *address_space_find(AddressSpace *s, uint64_t addr, ModuleInfo **ret_info)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	void **userdata;

	if (!mod)
		return NULL;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!*userdata)
		return NULL;
	*ret_info = *userdata;
	return mod;
}

bool address_space_read_word(AddressSpace *s, uint64_t addr, uint64_t *ret)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	const char *image;
	Dwarf_Addr bias;
	size_t n, size;
	Elf *elf;

	if (!mod)
		return false;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf || elf_getphdrnum(elf, &n) < 0)
		return false;
	image = elf_rawfile(elf, &size);
	if (!image)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr phdr;
		uint64_t off;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		if (addr - bias < phdr.p_vaddr || addr - bias + 8 > phdr.p_vaddr + phdr.p_filesz)
			continue;
		off = phdr.p_offset + (addr - bias - phdr.p_vaddr);
		if (off + 8 > size)
			return false;
		memcpy(ret, image + off, 8);
		return true;
	}
	return false;
}
