/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shared-modules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cleanup.h"
#include "hash.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(ProcessMaps *, process_maps_free);

/* One file and its module, loaded as the first process that mapped it had it. */
typedef struct SharedModule {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool vdso;
	uint64_t base;       /* the file's load base in that process */
	AddressSpace *space; /* just this module (NULL: it does not load) */
} SharedModule;

struct SharedModules {
	const TargetFileOpener *files;
	SymbolCache *cache;
	uint32_t owner;
	SharedModule *modules;
	size_t n, allocated;
	uint32_t *slots; /* open addressing: index + 1 into modules, 0 empty */
	size_t mask;
};

SharedModules *shared_modules_free(SharedModules *m)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		address_space_free(m->modules[i].space);
	free(m->modules);
	free(m->slots);
	free(m);
	return NULL;
}

void shared_modules_freep(SharedModules **m)
{
	shared_modules_free(*m);
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

static bool is_vdso(const ProcessMapping *m)
{
	return m->path && strcmp(m->path, "[vdso]") == 0;
}

static uint64_t key_hash(uint64_t inode, uint32_t major, uint32_t minor, bool vdso)
{
	return hash_combine(hash_combine(hash_finalize(inode), (uint64_t)major << 32 | minor), vdso);
}

static size_t slot_of(const SharedModules *m, const ProcessMapping *map)
{
	bool vdso = is_vdso(map);
	size_t i = key_hash(map->inode, map->dev_major, map->dev_minor, vdso) & m->mask;

	for (; m->slots[i]; i = (i + 1) & m->mask) {
		const SharedModule *s = &m->modules[m->slots[i] - 1];

		if (s->vdso == vdso && (vdso || (s->inode == map->inode &&
						 s->dev_major == map->dev_major &&
						 s->dev_minor == map->dev_minor)))
			break;
	}
	return i;
}

static int grow(SharedModules *m)
{
	size_t size = m->slots ? (m->mask + 1) * 2 : 64;
	uint32_t *slots;

	if (m->n >= m->allocated) {
		size_t want = m->allocated ? m->allocated * 2 : 32;
		SharedModule *a = reallocarray(m->modules, want, sizeof(*a));

		if (!a)
			return -ENOMEM;
		m->modules = a;
		m->allocated = want;
	}
	if (m->slots && (m->n + 1) * 2 <= m->mask + 1)
		return 0;
	slots = calloc(size, sizeof(uint32_t));
	if (!slots)
		return -ENOMEM;
	free(m->slots);
	m->slots = slots;
	m->mask = size - 1;
	for (size_t i = 0; i < m->n; i++) {
		const SharedModule *s = &m->modules[i];
		size_t j = key_hash(s->inode, s->dev_major, s->dev_minor, s->vdso) & m->mask;

		while (m->slots[j])
			j = (j + 1) & m->mask;
		m->slots[j] = (uint32_t)i + 1;
	}
	return 0;
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

/* The module of the file run [first, end) of 'maps', loaded alone in an address space of its own. */
static int load_module(SharedModules *m, const ProcessMaps *maps, size_t first, size_t end,
		       SharedModule *ret)
{
	_cleanup_(process_maps_freep) ProcessMaps *one = NULL;
	const ProcessMapping *head = &maps->mappings[first];
	int r;

	*ret = (SharedModule){
		.inode = head->inode,
		.dev_major = head->dev_major,
		.dev_minor = head->dev_minor,
		.vdso = is_vdso(head),
		.base = head->start - head->pgoff,
	};
	r = process_maps_new(maps->pid, &one);
	for (size_t i = first; r >= 0 && i < end; i++)
		r = process_maps_add(one, &maps->mappings[i]);
	if (r >= 0)
		r = address_space_new(m->files, m->cache, m->owner, &ret->space);
	if (r >= 0)
		r = address_space_update(ret->space, one);
	if (r < 0)
		ret->space = address_space_free(ret->space);
	/* a file that does not load stays nameless: remembered, not retried per address */
	return r == -ENOMEM ? r : 0;
}

Dwfl_Module *shared_modules_find(void *userdata, const ProcessMaps *maps, uint64_t addr,
				 ModuleInfo **ret_info, uint64_t *ret_addr)
{
	SharedModules *m = userdata;
	const ProcessMapping *map = process_maps_find(maps, addr);
	const SharedModule *s;
	size_t first, end, slot;

	*ret_addr = addr;
	if (!map || !map->path || !(map->prot & PROT_EXEC) || (map->path[0] != '/' && !is_vdso(map)))
		return NULL;
	file_run(maps, (size_t)(map - maps->mappings), &first, &end);
	if (!m->slots || !m->slots[slot = slot_of(m, map)]) {
		SharedModule loaded;

		if (grow(m) < 0 || load_module(m, maps, first, end, &loaded) < 0)
			return NULL;
		m->modules[m->n] = loaded;
		m->slots[slot_of(m, map)] = (uint32_t)++m->n;
		slot = slot_of(m, map);
	}
	s = &m->modules[m->slots[slot] - 1];
	if (!s->space)
		return NULL;
	/* the same file bytes, where the module has them */
	addr = addr - (maps->mappings[first].start - maps->mappings[first].pgoff) + s->base;
	*ret_addr = address_space_translate(s->space, addr);
	return address_space_find(s->space, *ret_addr, ret_info);
}
