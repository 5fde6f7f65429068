/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "target-file-cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "array.h"
#include "cleanup.h"

/* Descriptors and ranges kept at most: a target mapping more is served live. */
#define CACHE_MAX_FILES 512U
#define CACHE_MAX_RANGES 4096U

typedef struct CachedFile {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t kind; /* TARGET_FILE_MAPPED or TARGET_FILE_JITDUMP */
	char *path;    /* as the target mapped it */
	int fd;
} CachedFile;

typedef struct CachedRange {
	uint64_t start, end;
	uint32_t file; /* index into files */
} CachedRange;

struct TargetFileCache {
	pthread_mutex_t lock;
	uint32_t pid;
	const TargetFilePolicy *policy;
	TargetOwner owner;
	bool have_owner;
	CachedFile *files;
	size_t n_files, files_allocated;
	CachedRange *ranges;
	size_t n_ranges, ranges_allocated;
	int perf_map_fd;
};

int target_file_cache_new(uint32_t pid, const TargetFilePolicy *policy, TargetFileCache **ret)
{
	TargetFileCache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->pid = pid;
	c->policy = policy;
	c->perf_map_fd = -1;
	/* while the target surely runs: debug files are checked against its owner later */
	c->have_owner = target_owner_read(pid, &c->owner) >= 0;
	*ret = c;
	return 0;
}

TargetFileCache *target_file_cache_free(TargetFileCache *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n_files; i++) {
		safe_close(c->files[i].fd);
		free(c->files[i].path);
	}
	free(c->files);
	free(c->ranges);
	safe_close(c->perf_map_fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

static CachedFile *find_file(TargetFileCache *c, uint64_t inode, uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < c->n_files; i++)
		if (c->files[i].inode == inode && c->files[i].dev_major == major &&
		    c->files[i].dev_minor == minor)
			return &c->files[i];
	return NULL;
}

static int add_range(TargetFileCache *c, const ProcessMapping *m, size_t file)
{
	if (c->n_ranges >= CACHE_MAX_RANGES)
		return 0;
	if (ARRAY_RESERVE(c->ranges, c->ranges_allocated, c->n_ranges + 1, 16) < 0)
		return -ENOMEM;
	c->ranges[c->n_ranges++] = (CachedRange){ m->start, m->end, (uint32_t)file };
	return 0;
}

/* The target's perf map, once it has one: JITs map anonymous code before they announce it. */
static void note_anonymous_code(TargetFileCache *c)
{
	TargetFileRequest req = { .kind = TARGET_FILE_PERF_MAP, .pid = c->pid };
	int fd;

	if (c->perf_map_fd >= 0)
		return;
	fd = target_file_open(&req, (void *)c->policy);
	if (fd >= 0)
		c->perf_map_fd = fd;
}

static int note_file(TargetFileCache *c, const ProcessMapping *m)
{
	TargetFileRequest req = {
		.pid = c->pid,
		.address = m->start,
		.inode = m->inode,
		.dev_major = m->dev_major,
		.dev_minor = m->dev_minor,
	};
	CachedFile *f = find_file(c, m->inode, m->dev_major, m->dev_minor);
	int fd;

	if (f)
		return add_range(c, m, (size_t)(f - c->files));
	if (c->n_files >= CACHE_MAX_FILES)
		return 0;
	req.kind = target_file_is_jitdump(m->path) ? TARGET_FILE_JITDUMP : TARGET_FILE_MAPPED;
	fd = target_file_open(&req, (void *)c->policy);
	/* gone already, or refused: later requests are answered live (and fail the same way) */
	if (fd < 0)
		return fd == -ENOMEM ? fd : 0;
	if (ARRAY_RESERVE(c->files, c->files_allocated, c->n_files + 1, 8) < 0) {
		safe_close(fd);
		return -ENOMEM;
	}
	f = &c->files[c->n_files];
	*f = (CachedFile){ m->inode, m->dev_major, m->dev_minor, req.kind, strdup(m->path), fd };
	if (!f->path) {
		safe_close(fd);
		return -ENOMEM;
	}
	c->n_files++;
	return add_range(c, m, c->n_files - 1);
}

int target_file_cache_note_mapping(TargetFileCache *c, uint32_t pid, const ProcessMapping *m)
{
	int r = 0;

	/* code files, and jitdump files that JITs map for profilers to find */
	if (pid != c->pid || !(m->prot & PROT_EXEC))
		return 0;
	pthread_mutex_lock(&c->lock);
	if (target_mapping_has_file(m))
		r = note_file(c, m);
	else if (!m->path || strcmp(m->path, "//anon") == 0)
		note_anonymous_code(c);
	pthread_mutex_unlock(&c->lock);
	return r;
}

/* The file noted at the request's address with its identity, or NULL. */
static const CachedFile *lookup(const TargetFileCache *c, const TargetFileRequest *req)
{
	/* the latest mapping first: an address may have held several files */
	for (size_t i = c->n_ranges; i > 0; i--) {
		const CachedRange *r = &c->ranges[i - 1];
		const CachedFile *f = &c->files[r->file];

		if (req->address < r->start || req->address >= r->end)
			continue;
		if (req->inode == 0 || (f->inode == req->inode && f->dev_major == req->dev_major &&
					f->dev_minor == req->dev_minor))
			return f;
	}
	return NULL;
}

static int dup_fd(int fd)
{
	int r = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	return r < 0 ? negative_errno() : r;
}

static int open_locked(TargetFileCache *c, const TargetFileRequest *req)
{
	const CachedFile *f;
	int fd;

	switch (req->kind) {
	case TARGET_FILE_MAPPED:
	case TARGET_FILE_JITDUMP:
		f = lookup(c, req);
		if (f && f->kind == req->kind)
			return dup_fd(f->fd);
		return target_file_open(req, (void *)c->policy);
	case TARGET_FILE_PERF_MAP:
		if (c->perf_map_fd < 0) {
			fd = target_file_open(req, (void *)c->policy);
			if (fd < 0)
				return fd;
			c->perf_map_fd = fd;
		}
		return dup_fd(c->perf_map_fd);
	case TARGET_FILE_DEBUGLINK:
	case TARGET_FILE_BUILD_ID:
	case TARGET_FILE_DEBUG_ALT:
		/* by what was learnt while it ran: the owner, the path of the file mapped there */
		f = req->kind == TARGET_FILE_DEBUGLINK ? lookup(c, req) : NULL;
		if (!c->have_owner || (req->kind == TARGET_FILE_DEBUGLINK && !f))
			return target_file_open(req, (void *)c->policy);
		return target_file_open_remembered(req, c->policy, &c->owner, f ? f->path : NULL);
	default:
		return target_file_open(req, (void *)c->policy);
	}
}

int target_file_cache_open(const TargetFileRequest *request, void *userdata)
{
	TargetFileCache *c = userdata;
	int r;

	if (request->pid != c->pid)
		return target_file_open(request, (void *)c->policy);
	pthread_mutex_lock(&c->lock);
	r = open_locked(c, request);
	pthread_mutex_unlock(&c->lock);
	return r;
}
