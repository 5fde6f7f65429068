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
#include "hex.h"
#include "module-naming.h"
#include "sorted.h"
#include "time-util.h"

/* How often a module whose debug file is being fetched is looked up again. */
#define DEBUG_RETRY_NANOS NSEC_PER_SEC

/*
 * A second mapping of a module's file away from where the module is loaded
 * (V8 maps part of node's text again near its heap): its addresses mean the
 * module's addresses for the same file bytes.
 */
typedef struct AddressAlias {
	uint64_t start, end; /* [start, end) of the second mapping */
	uint64_t delta;      /* module address = address + delta (mod 2^64) */
} AddressAlias;

struct AddressSpace {
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks; /* libdwfl keeps pointers to these: they live here */
	const TargetFileOpener *files;
	SymbolCache *cache;
	uint32_t caller;          /* whose session reads the files (SymbolCache scope) */
	uint64_t generation;      /* of the ProcessMaps last seen */
	uint64_t signature;       /* of the module list last reported */
	uint64_t next_debug_retry; /* CLOCK_MONOTONIC_COARSE ns: when to look for fetched debug files */
	bool updated;
	int vdso_fd;              /* our own vDSO image: the kernel maps the same one everywhere */
	AddressAlias *aliases;    /* sorted by start */
	size_t n_aliases;
};

static ModuleInfo *module_info_free(ModuleInfo *m)
{
	if (!m)
		return NULL;
	free(m->path);
	free(m->build_id);
	symbol_module_unpin(m->module);
	cu_index_free(m->cu_index);
	symbol_index_free(m->symbol_index);
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
	free(s->aliases);
	free(s);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(AddressSpace *, address_space_free);

/* Every module is reported with its file open already: libdwfl is never to open one itself. */
static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	*elfp = NULL;
	return -1;
}

int address_space_new(const TargetFileOpener *files, SymbolCache *cache, uint32_t caller,
		      AddressSpace **ret)
{
	_cleanup_(address_space_freep) AddressSpace *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->vdso_fd = -1;
	s->cache = cache;
	s->caller = caller;
	s->files = files ?: &target_file_opener_default;
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = find_elf_none,
		.find_debuginfo = debug_file_find,
		.section_address = dwfl_offline_section_address,
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
	return target_mapping_has_file(m) || mapping_path_is_vdso(m->path);
}

/*
 * Mapped files come as runs of mappings (one per segment) of the same path.
 * Calls 'fn' for each run that holds code, with its mappings and the address
 * its offset 0 would have: what dwfl_report_elf() calls the base of an ET_DYN
 * file.
 */
typedef int (*FileRunFn)(AddressSpace *s, const ProcessMaps *maps, const ProcessMapping *first,
			 size_t n, uint64_t base, void *arg);

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
		r = exec ? fn(s, maps, first, j - i, base, arg) : 0;
		if (r < 0)
			return r;
		i = j;
	}
	return 0;
}

static bool same_file(const ProcessMapping *a, const ProcessMapping *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && a->path && b->path && strcmp(a->path, b->path) == 0;
}

/*
 * When the run 'first'[0, n) is a second mapping of part of a file loaded
 * elsewhere (V8 maps part of node's text again near its heap), a code mapping
 * of that load; else NULL. A load holds the lowest file offsets of the file's
 * code: ld.so maps a file from its start, a remap maps some part of it. Runs
 * that start at the same offset (dlmopen loads a library twice) are loads.
 */
static const ProcessMapping *alias_of(const ProcessMaps *maps, const ProcessMapping *first,
				      size_t n)
{
	const ProcessMapping *load = NULL;

	if (!target_mapping_has_file(first))
		return NULL;
	for (size_t i = 0; i < maps->n_mappings; i++) {
		const ProcessMapping *m = &maps->mappings[i];

		if ((m < first || m >= first + n) && same_file(m, first) && m->pgoff < first->pgoff &&
		    (m->prot & PROT_EXEC) && (!load || m->pgoff < load->pgoff))
			load = m;
	}
	return load;
}

/* The module of another run of the file 'first'[0, n) maps (an ET_EXEC loads once). */
static Dwfl_Module *module_of_file(AddressSpace *s, const ProcessMaps *maps,
				   const ProcessMapping *first, size_t n)
{
	for (size_t i = 0; i < maps->n_mappings; i++) {
		const ProcessMapping *m = &maps->mappings[i];
		Dwfl_Module *mod;

		if ((m < first || m >= first + n) && same_file(m, first) && (m->prot & PROT_EXEC) &&
		    (mod = dwfl_addrmodule(s->dwfl, m->start)))
			return mod;
	}
	return NULL;
}

static int add_to_signature(AddressSpace *s, const ProcessMaps *maps, const ProcessMapping *first,
			    size_t n, uint64_t base, void *arg)
{
	uint64_t *h = arg;

	*h = hash_combine(hash_string(*h, first->path), base);
	return 0;
}

typedef struct ReportState {
	ModuleInfo **old; /* modules before this update, to keep unchanged ones */
	size_t n_old;
	ModuleInfo **loaded; /* modules of this update so far */
	size_t n_loaded;
} ReportState;

static int add_loaded(ReportState *st, ModuleInfo *info)
{
	ModuleInfo **a = reallocarray(st->loaded, st->n_loaded + 1, sizeof(ModuleInfo *));

	if (!a)
		return -ENOMEM;
	st->loaded = a;
	st->loaded[st->n_loaded++] = info;
	return 0;
}

/* Is the run at 'first' more of a file an earlier run loaded at its fixed addresses (ET_EXEC)? */
static bool is_fixed_file_again(const ReportState *st, const ProcessMapping *first)
{
	for (size_t i = 0; i < st->n_loaded; i++) {
		const ModuleInfo *m = st->loaded[i];

		if (m->fixed && m->inode == first->inode && m->dev_major == first->dev_major &&
		    m->dev_minor == first->dev_minor && strcmp(m->path, first->path) == 0)
			return true;
	}
	return false;
}

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

/*
 * A module whose naming found no DWARF when it was made (module-naming.h) may
 * have a debug file now: a -dbgsym package installed since, a debuginfod
 * fetch completed. Names read with it belong to the module whose identity
 * carries that file (none of those read without it are mixed in), so the
 * session takes that one instead. Looked up once per session for each such
 * module (found or not: the module without it is the one acquired first);
 * nothing for modules named with DWARF.
 */
static int use_debug_file_since(AddressSpace *s, Dwfl_Module *mod, const struct stat *st,
				ModuleInfo *m)
{
	ModuleNaming *naming = symbol_module_get_naming(m->module);
	SymbolModule *with_debug;
	struct stat debug_st;
	ModuleIdentity id;
	int r;

	if (!naming || module_naming_has_dwarf(naming))
		return 0;
	if (debug_file_stat(&m->source, mod, &debug_st) < 0)
		return 0; /* none yet; -EAGAIN: being fetched, drop_debug_pending() asks again */
	module_identity_init(&id, st, &debug_st, s->caller, m->build_id);
	r = symbol_cache_acquire(s->cache, &id, &with_debug);
	if (r < 0)
		return r;
	symbol_module_unpin(m->module);
	m->module = with_debug;
	return 0;
}

/*
 * 'st' describes the file libdwfl reads (NULL: the vDSO, our own copy of what the kernel
 * maps into every process, the same for every caller).
 */
static int module_info_new(AddressSpace *s, Dwfl_Module *mod, const ProcessMaps *maps,
			   const ProcessMapping *first, size_t n_mappings, const struct stat *st,
			   uint64_t base, ModuleInfo **ret)
{
	const char *path = first->path;
	_cleanup_(module_info_freep) ModuleInfo *m = calloc(1, sizeof(*m));
	const unsigned char *bits;
	ModuleIdentity id;
	GElf_Addr vaddr;
	Dwarf_Addr start, end;
	GElf_Ehdr ehdr;
	Elf *elf;
	int n, r;

	if (!m)
		return -ENOMEM;
	m->source = (DebugFileSource){
		.files = s->files,
		.pid = maps->pid,
		.mapped_at = first->start,
		.inode = first->inode,
		.dev_major = first->dev_major,
		.dev_minor = first->dev_minor,
	};
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0) {
		m->build_id = malloc(HEX_ENCODED_SIZE((size_t)n));
		if (!m->build_id)
			return -ENOMEM;
		hex_encode(bits, (size_t)n, m->build_id);
	}
	if (st)
		module_identity_init(&id, st, NULL, s->caller, m->build_id);
	else
		id = (ModuleIdentity){ .scope = SYMBOL_SCOPE_SHARED, .build_id = m->build_id };
	r = symbol_cache_acquire(s->cache, &id, &m->module);
	if (r < 0)
		return r;
	if (st) {
		r = use_debug_file_since(s, mod, st, m);
		if (r < 0)
			return r;
	}
	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	m->base = base;
	m->start = start;
	m->end = end;
	m->inode = first->inode;
	m->dev_major = first->dev_major;
	m->dev_minor = first->dev_minor;
	elf = dwfl_module_getelf(mod, &m->bias);
	if (!elf)
		m->bias = base;
	m->fixed = elf && gelf_getehdr(elf, &ehdr) && ehdr.e_type == ET_EXEC;
	/* the first code mapping anchors the file's offsets; the load ends with its last one */
	for (size_t i = 0; i < n_mappings; i++)
		if (first[i].prot & PROT_EXEC) {
			m->map_start = first[i].start;
			m->map_offset = first[i].pgoff;
			break;
		}
	m->map_limit = first[n_mappings - 1].end;
	*ret = TAKE_PTR(m);
	return 0;
}

/*
 * Report a mapped file, opened through the opener (which knows deleted and replaced files).
 * *ret_st describes the descriptor libdwfl reads: the module's identity in the SymbolCache.
 */
static Dwfl_Module *report_elf_file(AddressSpace *s, const ProcessMaps *maps,
				    const ProcessMapping *first, uint64_t base,
				    struct stat *ret_st)
{
	TargetFileRequest req = {
		.kind = TARGET_FILE_MAPPED,
		.pid = maps->pid,
		.address = first->start,
		.inode = first->inode,
		.dev_major = first->dev_major,
		.dev_minor = first->dev_minor,
	};
	Dwfl_Module *mod;
	int fd;

	fd = target_file_opener_open(s->files, &req);
	if (fd < 0)
		return NULL;
	if (fstat(fd, ret_st) < 0) {
		safe_close(fd);
		return NULL;
	}
	/* on success the module owns the descriptor */
	mod = dwfl_report_elf(s->dwfl, first->path, first->path, fd, base, false);
	if (!mod)
		safe_close(fd);
	return mod;
}

static int report_file(AddressSpace *s, const ProcessMaps *maps, const ProcessMapping *first,
		       size_t n_mappings, uint64_t base, void *arg)
{
	const char *path = first->path;
	ReportState *st = arg;
	Dwfl_Module *mod;
	ModuleInfo *info = NULL;
	struct stat file_st, *file = NULL;
	void **userdata;
	int r;

	/*
	 * Named through the module of the file's own load (address_space_translate):
	 * reporting an ET_EXEC again would even make libdwfl drop the first one.
	 */
	if (alias_of(maps, first, n_mappings) || is_fixed_file_again(st, first))
		return 0;
	for (size_t i = 0; i < st->n_old; i++) {
		ModuleInfo *o = st->old[i];

		if (o && o->base == base && strcmp(o->path, path) == 0) {
			/* the same name and range finds the existing module: no reopening */
			mod = dwfl_report_module(s->dwfl, path, o->start, o->end);
			if (mod) {
				st->old[i] = NULL;
				return add_loaded(st, o);
			}
		}
	}
	if (mapping_path_is_vdso(path)) {
		int fd;

		if (vdso_open(s) < 0)
			return 0;
		fd = fcntl(s->vdso_fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return 0;
		mod = dwfl_report_elf(s->dwfl, path, path, fd, base, false);
		if (!mod)
			safe_close(fd);
	} else {
		mod = report_elf_file(s, maps, first, base, &file_st);
		file = &file_st;
	}
	/* files that vanished or are not ELF stay nameless: their frames keep module+offset */
	if (!mod)
		return 0;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*userdata)
		return 0;
	r = module_info_new(s, mod, maps, first, n_mappings, file, base, &info);
	if (r < 0)
		return r;
	*userdata = info;
	return add_loaded(st, info);
}

/* libdwfl passes the address of the module's userdata slot, not its value (MODCB_ARGS) */
static int module_removed(Dwfl_Module *mod, void *userdata_slot, const char *name, Dwarf_Addr base,
			  void *arg)
{
	void **slot = userdata_slot;

	*slot = module_info_free(*slot);
	return DWARF_CB_OK;
}

/* The module address of file offset 'offset' of 'mod': through the PT_LOAD that maps it. */
static bool module_address_of_offset(Dwfl_Module *mod, uint64_t offset, uint64_t *ret_addr,
				     uint64_t *ret_size)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD ||
		    offset < phdr.p_offset || offset - phdr.p_offset >= phdr.p_filesz)
			continue;
		*ret_addr = bias + phdr.p_vaddr + (offset - phdr.p_offset);
		*ret_size = phdr.p_filesz - (offset - phdr.p_offset);
		return true;
	}
	return false;
}

typedef struct AliasList {
	AddressAlias *a;
	size_t n;
} AliasList;

static int add_aliases(AddressSpace *s, const ProcessMaps *maps, const ProcessMapping *first,
		       size_t n_mappings, uint64_t base, void *arg)
{
	AliasList *list = arg;
	Dwfl_Module *mod = NULL;

	if (!target_mapping_has_file(first))
		return 0;
	for (size_t i = 0; i < n_mappings; i++) {
		const ProcessMapping *m = &first[i];
		uint64_t addr, size;
		AddressAlias *a;

		/* code no module covers, of a file loaded elsewhere */
		if (!(m->prot & PROT_EXEC) || dwfl_addrmodule(s->dwfl, m->start))
			continue;
		if (!mod && !(mod = module_of_file(s, maps, first, n_mappings)))
			return 0;
		if (!module_address_of_offset(mod, m->pgoff, &addr, &size))
			continue;
		a = reallocarray(list->a, list->n + 1, sizeof(AddressAlias));
		if (!a)
			return -ENOMEM;
		list->a = a;
		list->a[list->n++] = (AddressAlias){
			.start = m->start,
			.end = m->start + (size < m->end - m->start ? size : m->end - m->start),
			.delta = addr - m->start,
		};
	}
	return 0;
}

static int alias_compare(const void *a, const void *b)
{
	const AddressAlias *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int update_aliases(AddressSpace *s, const ProcessMaps *maps)
{
	AliasList list = {};
	int r;

	r = for_each_code_file(s, maps, add_aliases, &list);
	if (r < 0) {
		free(list.a);
		return r;
	}
	if (list.n > 1)
		qsort(list.a, list.n, sizeof(AddressAlias), alias_compare);
	free(s->aliases);
	s->aliases = list.a;
	s->n_aliases = list.n;
	return 0;
}

uint64_t address_space_translate(const AddressSpace *s, uint64_t addr)
{
	size_t i;

	if (s->n_aliases == 0)
		return addr;
	i = SORTED_UPPER_BOUND(s->aliases, s->n_aliases, start, addr);
	if (i == 0 || addr >= s->aliases[i - 1].end)
		return addr;
	return addr + s->aliases[i - 1].delta;
}

static int find_debug_pending(Dwfl_Module *mod, void **userdata, const char *name,
			      Dwarf_Addr start, void *arg)
{
	ModuleInfo *info = *userdata;

	if (!info || info->source.last_error != -EAGAIN)
		return DWARF_CB_OK;
	*(bool *)arg = true;
	return DWARF_CB_ABORT;
}

/*
 * libdwfl asks for a module's debug file once. When the opener answered that
 * it is being fetched (debuginfod), drop such modules now and then, so that
 * the update reports them afresh and their next lookup asks again: names fill
 * in while the session runs. Returns 1 when modules were dropped.
 */
static int drop_debug_pending(AddressSpace *s)
{
	uint64_t now = clock_nanos(CLOCK_MONOTONIC_COARSE);
	ReportState st = {};
	bool pending = false;
	int r = 0;

	if (now < s->next_debug_retry)
		return 0;
	s->next_debug_retry = now + DEBUG_RETRY_NANOS;
	dwfl_getmodules(s->dwfl, find_debug_pending, &pending, 0);
	if (!pending)
		return 0;
	if (dwfl_getmodules(s->dwfl, collect_module, &st, 0) != 0) {
		free(st.old);
		return -ENOMEM;
	}
	/* every other module reported again as it is, which keeps it */
	dwfl_report_begin(s->dwfl);
	for (size_t i = 0; i < st.n_old; i++)
		if (st.old[i]->source.last_error != -EAGAIN &&
		    !dwfl_report_module(s->dwfl, st.old[i]->path, st.old[i]->start, st.old[i]->end))
			r = -ENOMEM;
	free(st.old);
	if (dwfl_report_end(s->dwfl, module_removed, NULL) != 0 && r >= 0)
		r = -EIO;
	return r < 0 ? r : 1;
}

int address_space_update(AddressSpace *s, const ProcessMaps *maps)
{
	ReportState st = {};
	uint64_t signature = 0;
	bool dropped = false;
	int r;

	if (s->updated) {
		r = drop_debug_pending(s);
		if (r < 0)
			return r;
		dropped = r > 0;
	}
	if (!dropped && s->updated && maps->generation == s->generation)
		return 0;
	/* anonymous mmaps change the generation too; only code files matter here */
	r = for_each_code_file(s, maps, add_to_signature, &signature);
	if (r < 0)
		return r;
	s->generation = maps->generation;
	if (!dropped && s->updated && signature == s->signature)
		return 0;

	if (dwfl_getmodules(s->dwfl, collect_module, &st, 0) != 0) {
		free(st.old);
		return -ENOMEM;
	}
	dwfl_report_begin(s->dwfl);
	r = for_each_code_file(s, maps, report_file, &st);
	free(st.old);
	free(st.loaded);
	if (dwfl_report_end(s->dwfl, module_removed, NULL) != 0 && r >= 0)
		r = -EIO;
	if (r >= 0)
		r = update_aliases(s, maps);
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

typedef struct PathLookup {
	const char *path;
	Dwfl_Module *found;
} PathLookup;

static int match_path(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		      void *arg)
{
	PathLookup *l = arg;
	ModuleInfo *info = *userdata;

	if (!info || strcmp(info->path, l->path) != 0)
		return DWARF_CB_OK;
	l->found = mod;
	return DWARF_CB_ABORT;
}

Dwfl_Module *address_space_find_by_path(AddressSpace *s, const char *path)
{
	PathLookup l = { .path = path };

	dwfl_getmodules(s->dwfl, match_path, &l, 0);
	return l.found;
}

bool address_space_read_word(AddressSpace *s, uint64_t addr, uint64_t *ret)
{
	Dwfl_Module *mod;
	const char *image;
	Dwarf_Addr bias;
	size_t n, size;
	Elf *elf;

	addr = address_space_translate(s, addr);
	mod = dwfl_addrmodule(s->dwfl, addr);
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
