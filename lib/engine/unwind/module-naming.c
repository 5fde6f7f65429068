/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "module-naming.h"

#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cleanup.h"

struct ModuleNaming {
	ModuleInfo info; /* first (its DebugFileSource first): find_debuginfo's userdata */
	Dwfl_Callbacks callbacks;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	size_t bytes;
	bool has_dwarf;
	pthread_mutex_t lock;
};

/* The file is reported open already: libdwfl is never to open one itself. */
static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	*elfp = NULL;
	return -1;
}

/* After the session that made it: libdwfl does not ask again, and if it did, gets nothing. */
static int open_none(const TargetFileRequest *request, void *userdata)
{
	return -EPERM;
}

static const TargetFileOpener opener_none = { open_none, NULL };

ModuleNaming *module_naming_free(ModuleNaming *n)
{
	if (!n)
		return NULL;
	if (n->dwfl)
		dwfl_end(n->dwfl);
	cu_index_free(n->info.cu_index);
	symbol_index_free(n->info.symbol_index);
	pthread_mutex_destroy(&n->lock);
	free(n);
	return NULL;
}

/* The debug sections libdw holds, inflated. */
static size_t debug_bytes(Dwarf *dw)
{
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	Elf_Scn *scn = NULL;
	size_t bytes = 0;
	GElf_Shdr shdr;

	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && !(shdr.sh_flags & SHF_ALLOC) &&
		    shdr.sh_type != SHT_NOBITS)
			bytes += shdr.sh_size;
	return bytes;
}

/* The mapped file, opened again through the session's opener; the very file of the module. */
static int open_module_file(const ModuleInfo *info)
{
	const FileIdentity *want = &symbol_module_identity(info->module)->file;
	TargetFileRequest req = {
		.kind = TARGET_FILE_MAPPED,
		.pid = info->source.pid,
		.address = info->source.mapped_at,
		.inode = info->source.inode,
		.dev_major = info->source.dev_major,
		.dev_minor = info->source.dev_minor,
	};
	FileIdentity have;
	struct stat st;
	int fd;

	fd = target_file_opener_open(info->source.files, &req);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		safe_close(fd);
		return -errno;
	}
	have = file_identity_of(&st);
	if (have.dev != want->dev || have.ino != want->ino || have.size != want->size ||
	    have.mtime_sec != want->mtime_sec || have.mtime_nsec != want->mtime_nsec) {
		safe_close(fd);
		return -ESTALE;
	}
	return fd;
}

int module_naming_new(const ModuleInfo *info, ModuleNaming **ret)
{
	_cleanup_(module_naming_freep) ModuleNaming *n = NULL;
	Dwarf_Addr bias;
	Dwarf *dw;
	void **userdata;
	int fd;

	if (symbol_module_identity(info->module)->file.ino == 0)
		return -ENOENT;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	pthread_mutex_init(&n->lock, NULL);
	n->info.source = info->source;
	n->info.module = info->module;
	n->info.base = info->base;
	n->callbacks = (Dwfl_Callbacks){
		.find_elf = find_elf_none,
		.find_debuginfo = debug_file_find,
		.section_address = dwfl_offline_section_address,
	};
	n->dwfl = dwfl_begin(&n->callbacks);
	if (!n->dwfl)
		return -ENOMEM;
	fd = open_module_file(info);
	if (fd < 0)
		return fd;
	dwfl_report_begin(n->dwfl);
	/* on success the module owns the descriptor */
	n->mod = dwfl_report_elf(n->dwfl, info->path, info->path, fd, info->base, false);
	if (!n->mod) {
		safe_close(fd);
		return -EBADMSG;
	}
	if (dwfl_report_end(n->dwfl, NULL, NULL) != 0)
		return -EBADMSG;
	dwfl_module_info(n->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = &n->info;
	/* everything libdwfl looks for, now, while the session's opener is there */
	dw = dwfl_module_getdwarf(n->mod, &bias);
	n->has_dwarf = dw != NULL;
	n->bytes = debug_bytes(dw);
	(void)dwfl_module_getsymtab(n->mod);
	/* its symbols by address now, so that the cache counts them with the module */
	n->info.symbol_index_built = true;
	if (symbol_index_build(n->mod, &n->info.symbol_index) < 0)
		n->info.symbol_index = NULL;
	n->bytes += symbol_index_bytes(n->info.symbol_index);
	if (n->info.source.last_error == -EAGAIN)
		return -EAGAIN;
	n->info.source.files = &opener_none;
	if (!dwfl_module_getelf(n->mod, &bias))
		return -EBADMSG;
	n->info.bias = bias;
	*ret = TAKE_PTR(n);
	return 0;
}

size_t module_naming_bytes(const ModuleNaming *n)
{
	return n->bytes;
}

bool module_naming_has_dwarf(const ModuleNaming *n)
{
	return n->has_dwarf;
}

Dwfl_Module *module_naming_lock(ModuleNaming *n, ModuleInfo **ret_info)
{
	pthread_mutex_lock(&n->lock);
	*ret_info = &n->info;
	return n->mod;
}

void module_naming_unlock(ModuleNaming *n)
{
	pthread_mutex_unlock(&n->lock);
}
