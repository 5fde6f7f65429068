/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shared-modules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "array.h"
#include "cleanup.h"
#include "hash.h"
#include "id-table.h"

/*
 * Tries at loading a file, each through another process, before it stays
 * nameless: a process that exited before its samples were named (a churning
 * machine; bpf names at the end) may no longer be asked for the file, while
 * another one still maps it.
 */
#define LOAD_TRIES 16U

/* One file and its module, loaded as the first process that could hand it over had it. */
typedef struct SharedModule {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool vdso;
	uint64_t base;       /* the file's load base in that process */
	AddressSpace *space; /* just this module (NULL: it did not load) */
	uint32_t failed_pid; /* the process of the last try that failed */
	uint32_t tries;      /* that failed */
} SharedModule;

struct SharedModules {
	const TargetFileOpener *files;
	SymbolCache *cache;
	uint32_t owner;
	SharedModule *modules;
	size_t n, allocated;
	IdTable by_file; /* ids: indices into modules */
};

SharedModules *shared_modules_free(SharedModules *m)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		address_space_free(m->modules[i].space);
	free(m->modules);
	id_table_done(&m->by_file);
	free(m);
	return NULL;
}

int shared_modules_new(const TargetFileOpener *files, SymbolCache *cache, uint32_t owner,
		       SharedModules **ret)
{
	SharedModules *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->files = files;
	m->cache = cache;
	m->owner = owner;
	*ret = m;
	return 0;
}

size_t shared_modules_count(const SharedModules *m)
{
	return m->n;
}

static uint64_t key_hash(uint64_t inode, uint32_t major, uint32_t minor, bool vdso)
{
	return hash_combine(hash_combine(hash_finalize(inode), (uint64_t)major << 32 | minor), vdso);
}

static uint64_t module_hash(const void *userdata, uint32_t id)
{
	const SharedModules *m = userdata;
	const SharedModule *s = &m->modules[id];

	return key_hash(s->inode, s->dev_major, s->dev_minor, s->vdso);
}

typedef struct FileKey {
	const SharedModules *modules;
	const ProcessMapping *map;
	bool vdso;
} FileKey;

static bool module_is(const void *userdata, uint32_t id)
{
	const FileKey *k = userdata;
	const SharedModule *s = &k->modules->modules[id];

	return s->vdso == k->vdso && (k->vdso || (s->inode == k->map->inode &&
						  s->dev_major == k->map->dev_major &&
						  s->dev_minor == k->map->dev_minor));
}

/* true: the module of the file 'map' maps is at *ret_slot; false: *ret_slot is where it goes. */
static bool find(const SharedModules *m, const ProcessMapping *map, uint32_t *ret_slot)
{
	bool vdso = mapping_path_is_vdso(map->path);

	return m->by_file.slots &&
	       id_table_find(&m->by_file, key_hash(map->inode, map->dev_major, map->dev_minor, vdso),
			     module_is, &(FileKey){ m, map, vdso }, ret_slot);
}

/*
 * The run of mappings of one load of the file that 'at' belongs to (segments of
 * the same path and inode; a later mapping of offset 0 is another load), as
 * address-space.c reports files: [*ret_first, *ret_end).
 */
static void file_run(const ProcessMaps *maps, size_t at, size_t *ret_first, size_t *ret_end)
{
	const ProcessMapping *m = &maps->mappings[at];
	size_t first = at, end = at + 1;

	while (first > 0 && maps->mappings[first].pgoff != 0 &&
	       maps->mappings[first - 1].path && strcmp(maps->mappings[first - 1].path, m->path) == 0 &&
	       maps->mappings[first - 1].inode == m->inode)
		first--;
	while (end < maps->n_mappings && maps->mappings[end].pgoff != 0 && maps->mappings[end].path &&
	       strcmp(maps->mappings[end].path, m->path) == 0 && maps->mappings[end].inode == m->inode)
		end++;
	*ret_first = first;
	*ret_end = end;
}

/* Does 'space' hold a module for the code 'maps' maps? */
static bool space_has_module(AddressSpace *space, const ProcessMaps *maps)
{
	for (size_t i = 0; i < maps->n_mappings; i++) {
		const ProcessMapping *m = &maps->mappings[i];
		ModuleInfo *info;

		if ((m->prot & PROT_EXEC) &&
		    address_space_find(space, address_space_translate(space, m->start), &info))
			return true;
	}
	return false;
}

/*
 * The module of the file run [first, end) of 'maps', loaded alone in an
 * address space of its own into 's', or a failed try counted there (a file
 * that vanished, or whose process is gone).
 */
static int load_module(SharedModules *m, const ProcessMaps *maps, size_t first, size_t end,
		       SharedModule *s)
{
	_cleanup_(process_maps_freep) ProcessMaps *one = NULL;
	const ProcessMapping *head = &maps->mappings[first];
	AddressSpace *space = NULL;
	int r;

	r = process_maps_new(maps->pid, &one);
	for (size_t i = first; r >= 0 && i < end; i++)
		r = process_maps_add(one, &maps->mappings[i]);
	if (r >= 0)
		r = address_space_new(m->files, m->cache, m->owner, &space);
	if (r >= 0)
		r = address_space_update(space, one);
	if (r >= 0 && !space_has_module(space, one))
		r = -ENOENT;
	if (r < 0) {
		address_space_free(space);
		s->failed_pid = maps->pid;
		s->tries++;
		/* remembered: tried again only through another process (try_again()) */
		return r == -ENOMEM ? r : 0;
	}
	s->base = head->start - head->pgoff;
	s->space = space;
	return 0;
}

/* Worth another try, through this process? */
static bool try_again(const SharedModule *s, const ProcessMaps *maps)
{
	return !s->space && s->tries < LOAD_TRIES && s->failed_pid != maps->pid;
}

Dwfl_Module *shared_modules_find(void *userdata, const ProcessMaps *maps, uint64_t addr,
				 ModuleInfo **ret_info, uint64_t *ret_addr)
{
	SharedModules *m = userdata;
	const ProcessMapping *map = process_maps_find(maps, addr);
	SharedModule *s;
	size_t first, end;
	uint32_t slot;

	*ret_addr = addr;
	if (!map || !map->path || !(map->prot & PROT_EXEC) ||
	    (map->path[0] != '/' && !mapping_path_is_vdso(map->path)))
		return NULL;
	file_run(maps, (size_t)(map - maps->mappings), &first, &end);
	if (!find(m, map, &slot)) {
		SharedModule loaded = {
			.inode = map->inode,
			.dev_major = map->dev_major,
			.dev_minor = map->dev_minor,
			.vdso = mapping_path_is_vdso(map->path),
		};

		if (id_table_reserve(&m->by_file, 1, module_hash, m) < 0 ||
		    ARRAY_RESERVE(m->modules, m->allocated, m->n + 1, 32) < 0 ||
		    load_module(m, maps, first, end, &loaded) < 0)
			return NULL;
		m->modules[m->n] = loaded;
		(void)find(m, map, &slot); /* the empty slot, as the table is now */
		id_table_insert(&m->by_file, slot, (uint32_t)m->n++);
	}
	s = &m->modules[m->by_file.slots[slot]];
	if (try_again(s, maps) && load_module(m, maps, first, end, s) < 0)
		return NULL;
	if (!s->space)
		return NULL;
	/* the same file bytes, where the module has them */
	addr = addr - (maps->mappings[first].start - maps->mappings[first].pgoff) + s->base;
	*ret_addr = address_space_translate(s->space, addr);
	return address_space_find(s->space, *ret_addr, ret_info);
}
