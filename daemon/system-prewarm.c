/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "system-prewarm.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi-table.h"
#include "cleanup.h"
#include "hex.h"
#include "log.h"
#include "target-files.h"
#include "worker-pool.h"

/* libc and ld.so */
#define OBJECTS_MAX 2

typedef struct SystemObject {
	char *path;
	uint8_t build_id[TARGET_FILE_BUILD_ID_MAX];
	size_t build_id_size;
	int error; /* of compiling its table */
} SystemObject;

struct SystemPrewarm {
	const SymbolCacheStore *store;
	int error; /* of making the cache */
	WorkerPool *worker;
	SystemObject objects[OBJECTS_MAX];
	size_t n_objects;
};

/* The NT_GNU_BUILD_ID of a loaded object, from its notes in memory; its size, or 0. */
static size_t loaded_build_id(const struct dl_phdr_info *info, uint8_t ret[TARGET_FILE_BUILD_ID_MAX])
{
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const void *)p;
			size_t name = (n->n_namesz + 3) & ~3U, desc = (n->n_descsz + 3) & ~3U;
			const uint8_t *d = p + sizeof(*n) + name;

			if ((size_t)(end - p) - sizeof(*n) < name + desc)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof(*n), "GNU", 4) == 0 && n->n_descsz >= 2 &&
			    n->n_descsz <= TARGET_FILE_BUILD_ID_MAX) {
				memcpy(ret, d, n->n_descsz);
				return n->n_descsz;
			}
			p = d + desc;
		}
	}
	return 0;
}

/* dl_iterate_phdr callback: profd's own C library and dynamic loader, with their build-ids. */
static int find_object(struct dl_phdr_info *info, size_t size, void *userdata)
{
	SystemPrewarm *p = userdata;
	const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	SystemObject *o = &p->objects[p->n_objects];

	if (p->n_objects == OBJECTS_MAX || !slash ||
	    (strncmp(slash + 1, "libc.so.", 8) != 0 && strncmp(slash + 1, "ld-linux", 8) != 0))
		return 0;
	o->build_id_size = loaded_build_id(info, o->build_id);
	if (o->build_id_size == 0)
		return 0;
	o->path = strdup(info->dlpi_name);
	if (o->path)
		p->n_objects++;
	return 0;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The table of the file open in 'fd' (taken), as a session's unwinder compiles it. */
static int compile_table(const char *path, int fd, CfiTable **ret)
{
	Dwfl *dwfl = dwfl_begin(&offline_callbacks);
	Dwfl_Module *mod;
	int r;

	if (!dwfl) {
		safe_close(fd);
		return -ENOMEM;
	}
	/* on success the module owns the descriptor */
	mod = dwfl_report_elf(dwfl, path, path, fd, 0, false);
	if (!mod)
		safe_close(fd);
	r = mod && dwfl_report_end(dwfl, NULL, NULL) == 0 ? cfi_table_build(mod, ret) : -EBADMSG;
	dwfl_end(dwfl);
	return r;
}

/* Its module in the cache, with its table; saved to the shared store when unpinned. */
static int prewarm_object(SymbolCache *cache, const SystemObject *o)
{
	char hex[HEX_ENCODED_SIZE(TARGET_FILE_BUILD_ID_MAX)];
	_cleanup_close_ int fd = -1;
	SymbolModule *module;
	ModuleIdentity id;
	CfiTable *table;
	struct stat st;
	int r;

	fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return negative_errno();
	hex_encode(o->build_id, o->build_id_size, hex);
	module_identity_init(&id, &st, NULL, 0, hex);
	if (id.scope != SYMBOL_SCOPE_SHARED)
		return -EPERM; /* not a file every caller may share */
	r = symbol_cache_acquire(cache, &id, &module);
	if (r < 0)
		return r;
	if (!symbol_module_get_cfi(module)) {
		r = compile_table(o->path, TAKE_FD(fd), &table);
		if (r >= 0)
			symbol_module_set_cfi(module, table);
	}
	symbol_module_unpin(module);
	return r;
}

/* WorkFn, on the worker thread: through a cache of its own, which saves each module as the
 * last pin goes. */
static void prewarm(void *userdata)
{
	SystemPrewarm *p = userdata;
	_cleanup_(symbol_cache_freep) SymbolCache *cache = NULL;

	/* nobody's session waits for it: it takes what the machine leaves over */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	p->error = symbol_cache_new(&cache);
	if (p->error < 0)
		return;
	symbol_cache_set_store(cache, p->store);
	for (size_t i = 0; i < p->n_objects; i++)
		p->objects[i].error = prewarm_object(cache, &p->objects[i]);
}

/* WorkDoneFn, on the loop. */
static void prewarm_done(void *userdata)
{
	SystemPrewarm *p = userdata;

	if (p->error < 0)
		return (void)log_warning("cannot compile the system C library's unwind tables: %s",
					 strerror(-p->error));
	for (size_t i = 0; i < p->n_objects; i++)
		if (p->objects[i].error < 0)
			log_warning("cannot compile the unwind table of '%s' for every caller: %s",
				    p->objects[i].path, strerror(-p->objects[i].error));
		else
			log_info("the unwind table of '%s' is in the shared symbol store",
				 p->objects[i].path);
}

SystemPrewarm *system_prewarm_free(SystemPrewarm *p)
{
	if (!p)
		return NULL;
	worker_pool_free(p->worker);
	for (size_t i = 0; i < p->n_objects; i++)
		free(p->objects[i].path);
	free(p);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(SystemPrewarm *, system_prewarm_free);

int system_prewarm_start(sd_event *event, const SymbolCacheStore *store, InflatedDebug *inflated,
			 SystemPrewarm **ret)
{
	_cleanup_(system_prewarm_freep) SystemPrewarm *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->store = store;
	dl_iterate_phdr(find_object, p);
	for (size_t i = 0; inflated && i < p->n_objects; i++)
		inflated_debug_prepare(inflated, p->objects[i].build_id, p->objects[i].build_id_size);
	r = worker_pool_new(event, 1, &p->worker);
	if (r >= 0)
		r = worker_pool_submit(p->worker, prewarm, prewarm_done, p);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}
