/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "process-resolvers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "id-table.h"
#include "shared-modules.h"
#include "target-files.h"

/*
 * DWARF mode: mapped files kept open by identity, at most. Each process has
 * its own address space there, and a process gone before its samples are
 * named (a churning machine) may no longer hand its files over; another one
 * mapping the same file did (frame-pointer mode shares whole modules).
 */
#define KEPT_FILES_MAX 64U

typedef struct KeptFile {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	int fd;
} KeptFile;

typedef struct Entry {
	uint32_t pid;
	StackResolver *resolver;
} Entry;

struct ProcessResolvers {
	StackResolverOptions options; /* .cache is the shared cache, .modules the shared modules */
	SymbolCache *own_cache;
	SharedModules *shared;        /* frame-pointer mode: one module per file for all */
	ModuleFinder finder;
	const TargetFileOpener *inner_files; /* DWARF mode: what 'files' asks when it has no copy */
	TargetFileOpener files;
	KeptFile *kept;
	size_t n_kept, kept_allocated;
	ProcessNamespacePidFn namespace_pid; /* NULL: target_namespace_pid() */
	void *namespace_pid_userdata;
	IdTable by_pid;               /* ids: indices into entries */
	Entry *entries;               /* one per process with a resolver, in no order */
	size_t n_entries, entries_allocated;
	/*
	 * The session's stack-quality report: each process's counts merged in as it
	 * is forgotten, the rest at the end; the unnamed frames are counted once,
	 * then, over the profile they all share (a sample is one process's).
	 */
	Profile *profile;             /* the one the resolvers add to: frame ids are its */
	StackQuality *quality;
	uint32_t *frame_module;       /* per frame of 'profile': 1 + its module in 'quality' when
				       * nothing names it, else 0 */
	size_t frame_module_allocated;
	int quality_error;            /* a merge failed: no report */
	bool finished;
};

ProcessResolvers *process_resolvers_free(ProcessResolvers *r)
{
	if (!r)
		return NULL;
	for (size_t i = 0; i < r->n_entries; i++)
		stack_resolver_free(r->entries[i].resolver);
	free(r->entries);
	id_table_done(&r->by_pid);
	stack_quality_free(r->quality);
	free(r->frame_module);
	for (size_t i = 0; i < r->n_kept; i++)
		safe_close(r->kept[i].fd);
	free(r->kept);
	/* after the resolvers, which name through them */
	shared_modules_free(r->shared);
	symbol_cache_free(r->own_cache);
	free(r);
	return NULL;
}

/* Keep a copy of 'fd' when it is the very file 'req' names. */
static void keep_file(ProcessResolvers *r, const TargetFileRequest *req, int fd)
{
	struct stat st;
	int copy;

	if (r->n_kept >= KEPT_FILES_MAX || fstat(fd, &st) < 0 || st.st_ino != req->inode ||
	    st.st_dev != makedev(req->dev_major, req->dev_minor) ||
	    ARRAY_RESERVE(r->kept, r->kept_allocated, r->n_kept + 1, 16) < 0)
		return;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (copy >= 0)
		r->kept[r->n_kept++] = (KeptFile){ req->inode, req->dev_major, req->dev_minor, copy };
}

/* TargetFileOpenFn of DWARF mode: a mapped file some process handed over before, by identity. */
static int open_kept(const TargetFileRequest *req, void *userdata)
{
	ProcessResolvers *r = userdata;
	int fd;

	if (req->kind != TARGET_FILE_MAPPED || req->inode == 0)
		return target_file_opener_open(r->inner_files, req);
	for (size_t i = 0; i < r->n_kept; i++) {
		const KeptFile *k = &r->kept[i];

		if (k->inode == req->inode && k->dev_major == req->dev_major &&
		    k->dev_minor == req->dev_minor) {
			fd = fcntl(k->fd, F_DUPFD_CLOEXEC, 3);
			return fd < 0 ? negative_errno() : fd;
		}
	}
	fd = target_file_opener_open(r->inner_files, req);
	if (fd >= 0)
		keep_file(r, req, fd);
	return fd;
}

int process_resolvers_new(const StackResolverOptions *options, ProcessResolvers **ret)
{
	_cleanup_(process_resolvers_freep) ProcessResolvers *r = calloc(1, sizeof(*r));
	int k;

	if (!r)
		return -ENOMEM;
	/* a namespace pid belongs to one process, not to all of them */
	if (options->ns_pid)
		return -EINVAL;
	r->options = *options;
	if (!r->options.cache) {
		k = symbol_cache_new(&r->own_cache);
		if (k < 0)
			return k;
		r->options.cache = r->own_cache;
	}
	if (r->options.mode == STACK_UNWIND_FP && !r->options.modules) {
		k = shared_modules_new(r->options.files, r->options.cache, r->options.owner,
				       &r->shared);
		if (k < 0)
			return k;
		r->finder = (ModuleFinder){ shared_modules_find, r->shared };
		r->options.modules = &r->finder;
	}
	if (r->options.mode == STACK_UNWIND_DWARF) {
		r->inner_files = r->options.files ?: &target_file_opener_default;
		r->files = (TargetFileOpener){ open_kept, r };
		r->options.files = &r->files;
	}
	k = id_table_init(&r->by_pid, 32);
	if (k < 0)
		return k;
	k = stack_quality_new(&r->quality);
	if (k < 0)
		return k;
	*ret = TAKE_PTR(r);
	return 0;
}

/* The ids of the IdTable are indices into 'entries', keyed by pid. */
static uint64_t entry_pid(const void *userdata, uint32_t id)
{
	const ProcessResolvers *r = userdata;

	return r->entries[id].pid;
}

/* true: 'pid' is at *ret_slot; false: *ret_slot is where it goes. */
static bool find(const ProcessResolvers *r, uint32_t pid, uint32_t *ret_slot)
{
	return id_table_find_key(&r->by_pid, pid, entry_pid, r, ret_slot);
}

static int resolver_for(ProcessResolvers *r, uint32_t pid, StackResolver **ret)
{
	StackResolverOptions ro;
	uint32_t slot;
	Entry *e;
	int k;

	if (pid == 0)
		return -EINVAL;
	if (find(r, pid, &slot)) {
		*ret = r->entries[r->by_pid.slots[slot]].resolver;
		return 0;
	}
	k = id_table_reserve_keys(&r->by_pid, 1, entry_pid, r);
	if (k >= 0)
		k = ARRAY_RESERVE(r->entries, r->entries_allocated, r->n_entries + 1, 32);
	if (k < 0)
		return k;
	e = &r->entries[r->n_entries];
	*e = (Entry){ .pid = pid };
	/* its perf map is named with the pid it knows itself by (containers) */
	ro = r->options;
	ro.ns_pid = r->namespace_pid ? r->namespace_pid(r->namespace_pid_userdata, pid)
				     : target_namespace_pid(pid);
	k = stack_resolver_new(&ro, &e->resolver);
	if (k < 0)
		return k;
	slot = id_table_empty_slot_key(&r->by_pid, pid);
	id_table_insert(&r->by_pid, slot, (uint32_t)r->n_entries++);
	*ret = e->resolver;
	return 0;
}

int process_resolvers_resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			      Profile *profile, SampleStack *ret)
{
	ProcessResolvers *r = userdata;
	StackResolver *resolver;
	int k;

	k = resolver_for(r, sample->pid, &resolver);
	if (k < 0)
		return k;
	if (profile != r->profile) {
		r->profile = profile;
		/* frame ids are the profile's */
		if (r->frame_module)
			memset(r->frame_module, 0, r->frame_module_allocated * sizeof(uint32_t));
	}
	return stack_resolver_resolve(resolver, sample, maps, profile, ret);
}

/* The counts of one process into the session's, with which of the profile's frames are unnamed. */
static int merge_quality(ProcessResolvers *r, StackResolver *resolver)
{
	const StackQuality *q = stack_resolver_get_quality(resolver);
	_cleanup_free_ uint32_t *map = NULL;
	const uint32_t *frames;
	uint32_t n;
	int k;

	k = stack_resolver_finish_naming(resolver);
	if (k < 0)
		return k;
	map = calloc(stack_quality_n_modules(q) + 1, sizeof(uint32_t));
	if (!map)
		return -ENOMEM;
	k = stack_quality_merge(r->quality, q, map);
	if (k < 0)
		return k;
	frames = stack_resolver_get_unnamed_frames(resolver, r->profile, &n);
	if (n > r->frame_module_allocated) {
		size_t old = r->frame_module_allocated;

		k = ARRAY_RESERVE(r->frame_module, r->frame_module_allocated, n, n);
		if (k < 0)
			return k;
		memset(r->frame_module + old, 0,
		       (r->frame_module_allocated - old) * sizeof(uint32_t));
	}
	/* a frame id is one module's (its name holds the module): no two processes disagree */
	for (uint32_t i = 0; i < n; i++)
		if (frames[i] > 0 && frames[i] <= stack_quality_n_modules(q))
			r->frame_module[i] = map[frames[i] - 1] + 1;
	return 0;
}

int process_resolvers_finish(ProcessResolvers *r)
{
	int k = r->quality_error;

	if (r->finished)
		return k;
	r->finished = true;
	for (size_t i = 0; k >= 0 && i < r->n_entries; i++)
		k = merge_quality(r, r->entries[i].resolver);
	if (k >= 0 && r->profile)
		k = stack_quality_count_unnamed(r->quality, r->profile, r->frame_module,
						(uint32_t)(r->frame_module_allocated < UINT32_MAX
								   ? r->frame_module_allocated
								   : UINT32_MAX));
	r->quality_error = k < 0 ? k : 0;
	return k < 0 ? k : 0;
}

const StackQuality *process_resolvers_get_quality(const ProcessResolvers *r)
{
	return r->finished && r->quality_error == 0 ? r->quality : NULL;
}

void process_resolvers_set_namespace_pid(ProcessResolvers *r, ProcessNamespacePidFn fn,
					 void *userdata)
{
	r->namespace_pid = fn;
	r->namespace_pid_userdata = userdata;
}

void process_resolvers_forget(ProcessResolvers *r, uint32_t pid)
{
	uint32_t slot, id, last;

	if (pid == 0 || !find(r, pid, &slot))
		return;
	id = r->by_pid.slots[slot];
	/* its samples stay in the profile: so do its counts in the report */
	if (!r->finished && r->quality_error == 0)
		r->quality_error = merge_quality(r, r->entries[id].resolver);
	stack_resolver_free(r->entries[id].resolver);
	id_table_remove_key(&r->by_pid, slot, entry_pid, r);
	/* the last entry fills the hole: the table then finds it under its new id */
	last = (uint32_t)--r->n_entries;
	if (id != last) {
		r->entries[id] = r->entries[last];
		if (find(r, r->entries[id].pid, &slot))
			r->by_pid.slots[slot] = id;
	}
}

void process_resolvers_exited(void *userdata, uint32_t pid)
{
	process_resolvers_forget(userdata, pid);
}

size_t process_resolvers_count(const ProcessResolvers *r)
{
	return r->n_entries;
}
