/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "inflated-debug.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "atomic-file.h"
#include "cleanup.h"
#include "hex.h"
#include "log.h"
#include "time-util.h"
#include "worker-pool.h"

#define COPY_SUFFIX ".debug"

struct InflatedDebug {
	pthread_mutex_t lock; /* 'pending': requests come from the loop and from unwind threads */
	int fd;               /* inflated-debug/ */
	uint64_t max_bytes;
	WorkerPool *worker; /* one thread, at nice 19 once it made a copy */
	char **pending;     /* names of the copies queued and not made yet */
	size_t n_pending, n_allocated;
	DebugFileSubstitute substitute;
};

typedef struct CopyJob {
	InflatedDebug *cache;
	int source;
	char name[NAME_MAX + 1];
	uint64_t bytes, cpu_nanos;
	int error;
} CopyJob;

/* What every caller may share: a regular file of root's that no one else can write. */
static bool is_shareable(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The build-id asked for and the identity of the file found for it. */
static void copy_name(const TargetFileRequest *req, const struct stat *st, char ret[NAME_MAX + 1])
{
	char hex[HEX_ENCODED_SIZE(TARGET_FILE_BUILD_ID_MAX)];

	hex_encode(req->build_id, req->build_id_size, hex);
	snprintf(ret, NAME_MAX + 1, "%s-%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%" PRIx64 ".%09ld" COPY_SUFFIX,
		 hex, (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
		 (uint64_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
}

static bool has_compressed_sections(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	bool found = false;
	GElf_Shdr shdr;

	while (elf && !found && (scn = elf_nextscn(elf, scn)))
		found = gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_COMPRESSED);
	elf_end(elf);
	return found;
}

/*
 * Regular files of the directory: their total size and the least recently handed over.
 * Temporary files left by a crash go (only the worker thread writes, and it is the caller).
 */
static int scan(InflatedDebug *c, uint64_t *ret_bytes, char ret_oldest[NAME_MAX + 1])
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct timespec oldest = { .tv_sec = INT64_MAX };
	struct dirent *de;
	uint64_t bytes = 0;
	int r;

	r = dir_fd_open_stream(c->fd, &d);
	if (r < 0)
		return r;
	ret_oldest[0] = '\0';
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.') {
			if (de->d_name[1] == '#')
				(void)unlinkat(c->fd, de->d_name, 0);
			continue;
		}
		if (fstatat(c->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		bytes += (uint64_t)st.st_size;
		if (st.st_mtim.tv_sec < oldest.tv_sec ||
		    (st.st_mtim.tv_sec == oldest.tv_sec && st.st_mtim.tv_nsec < oldest.tv_nsec)) {
			oldest = st.st_mtim;
			snprintf(ret_oldest, NAME_MAX + 1, "%s", de->d_name);
		}
	}
	*ret_bytes = bytes;
	return 0;
}

/* Within the cap: the least recently handed over copies go. */
static void trim(InflatedDebug *c)
{
	char oldest[NAME_MAX + 1];
	uint64_t bytes;

	while (scan(c, &bytes, oldest) >= 0 && bytes > c->max_bytes && oldest[0])
		if (unlinkat(c->fd, oldest, 0) < 0)
			break;
}

/* AtomicFillFn: the source's bytes, then each compressed section inflated in place. */
static int fill_inflated(int fd, void *userdata)
{
	CopyJob *j = userdata;
	Elf_Scn *scn = NULL;
	struct stat st;
	off_t offset = 0;
	Elf *elf;
	int r = 0;

	if (fstat(j->source, &st) < 0)
		return negative_errno();
	while (offset < st.st_size) {
		ssize_t n = sendfile(fd, j->source, &offset, (size_t)(st.st_size - offset));

		if (n <= 0)
			return n < 0 ? negative_errno() : -EIO;
	}
	elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!elf)
		return -EBADMSG;
	j->bytes = (uint64_t)st.st_size;
	while (r == 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		GElf_Chdr chdr;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_COMPRESSED))
			continue;
		if (!gelf_getchdr(scn, &chdr))
			r = -EBADMSG;
		else if (j->bytes > j->cache->max_bytes ||
			 chdr.ch_size > j->cache->max_bytes - j->bytes)
			r = -EFBIG; /* checked before it is inflated */
		else if (elf_compress(scn, 0, 0) < 0)
			r = -EBADMSG;
		else
			j->bytes += chdr.ch_size - shdr.sh_size;
	}
	if (r == 0 && elf_update(elf, ELF_C_WRITE) < 0)
		r = -EBADMSG;
	elf_end(elf);
	return r;
}

/* WorkFn: make the copy, on the worker thread. */
static void make_copy(void *userdata)
{
	CopyJob *j = userdata;
	uint64_t start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);

	/* nobody's session waits for it: it takes what the machine leaves over */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	j->error = write_file_atomic_fn(j->cache->fd, j->name, fill_inflated, j);
	if (j->error >= 0)
		trim(j->cache);
	j->cpu_nanos = clock_nanos(CLOCK_THREAD_CPUTIME_ID) - start;
}

static void pending_remove(InflatedDebug *c, const char *name)
{
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_pending; i++)
		if (strcmp(c->pending[i], name) == 0) {
			free(c->pending[i]);
			c->pending[i] = c->pending[--c->n_pending];
			break;
		}
	pthread_mutex_unlock(&c->lock);
}

/* WorkDoneFn, on the loop. */
static void copy_done(void *userdata)
{
	CopyJob *j = userdata;

	if (j->error < 0)
		log_warning("cannot make an inflated copy of debug file '%s': %s", j->name,
			    strerror(-j->error));
	else
		log_info("made an inflated copy of debug file '%s': %" PRIu64 " KiB, %" PRIu64
			 " ms of CPU", j->name, j->bytes / 1024, j->cpu_nanos / 1000000);
	pending_remove(j->cache, j->name);
	safe_close(j->source);
	free(j);
}

/* Queue the copy of 'fd' as 'name', unless it is queued already. */
static void queue_copy(InflatedDebug *c, const char *name, int fd)
{
	_cleanup_free_ CopyJob *j = NULL;
	char *copy = NULL;
	bool queued = false;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_pending; i++)
		queued = queued || strcmp(c->pending[i], name) == 0;
	if (!queued && ARRAY_RESERVE(c->pending, c->n_allocated, c->n_pending + 1, 4) >= 0 &&
	    (copy = strdup(name)))
		c->pending[c->n_pending++] = copy;
	pthread_mutex_unlock(&c->lock);
	if (!copy)
		return;
	j = calloc(1, sizeof(*j));
	if (j) {
		*j = (CopyJob){ .cache = c, .source = fcntl(fd, F_DUPFD_CLOEXEC, 3) };
		snprintf(j->name, sizeof(j->name), "%s", name);
	}
	if (!j || j->source < 0 || worker_pool_submit(c->worker, make_copy, copy_done, j) < 0) {
		if (j)
			safe_close(j->source);
		pending_remove(c, name);
		return;
	}
	log_info("making an inflated copy of debug file '%s'", name);
	TAKE_PTR(j);
}

/* DebugFileSubstitute: the copy of 'fd' if made; else queue it, if 'fd' has anything to inflate. */
static int substitute(const TargetFileRequest *req, int fd, void *userdata)
{
	InflatedDebug *c = userdata;
	char name[NAME_MAX + 1];
	struct stat st;
	int copy;

	if (req->kind != TARGET_FILE_BUILD_ID || fstat(fd, &st) < 0 || !is_shareable(&st))
		return -EPERM;
	copy_name(req, &st, name);
	copy = open_regular_at(c->fd, name);
	if (copy >= 0) {
		(void)futimens(copy, NULL); /* the newer, the later it goes */
		return copy;
	}
	if (has_compressed_sections(fd))
		queue_copy(c, name, fd);
	return -ENOENT;
}

const DebugFileSubstitute *inflated_debug_substitute(InflatedDebug *c)
{
	return &c->substitute;
}

void inflated_debug_prepare(InflatedDebug *c, const uint8_t *build_id, size_t size)
{
	TargetFileRequest req = { .kind = TARGET_FILE_BUILD_ID, .pid = (uint32_t)getpid() };
	int fd, copy;

	if (size < 2 || size > TARGET_FILE_BUILD_ID_MAX)
		return;
	memcpy(req.build_id, build_id, size);
	req.build_id_size = (uint32_t)size;
	fd = target_file_open(&req, NULL);
	if (fd < 0)
		return; /* no debug file: nothing to inflate */
	copy = substitute(&req, fd, c);
	safe_close(copy);
	safe_close(fd);
}

InflatedDebug *inflated_debug_free(InflatedDebug *c)
{
	if (!c)
		return NULL;
	worker_pool_free(c->worker);
	for (size_t i = 0; i < c->n_pending; i++)
		free(c->pending[i]);
	free(c->pending);
	safe_close(c->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(InflatedDebug *, inflated_debug_free);

int inflated_debug_new(sd_event *event, int state_fd, uint64_t max_bytes, InflatedDebug **ret)
{
	_cleanup_(inflated_debug_freep) InflatedDebug *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->fd = -1;
	c->max_bytes = max_bytes;
	c->substitute = (DebugFileSubstitute){ substitute, c };
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	r = c->fd = open_private_dir(state_fd, INFLATED_DEBUG_DIR, 0700);
	if (r < 0)
		return r;
	r = worker_pool_new(event, 1, &c->worker);
	if (r < 0)
		return r;
	trim(c); /* within today's cap */
	*ret = TAKE_PTR(c);
	return 0;
}
