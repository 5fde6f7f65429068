/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "debuginfod-fetch.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "hex.h"
#include "log.h"
#include "time-util.h"

#define BUILD_ID_HEX_MAX HEX_ENCODED_SIZE(TARGET_FILE_BUILD_ID_MAX)

typedef enum FetchState {
	FETCH_QUEUED,
	FETCH_RUNNING,
	FETCH_FAILED,
} FetchState;

/* A build-id asked for and not in the cache: waiting, being fetched, or failed at 'since'. */
typedef struct FetchEntry {
	char build_id[BUILD_ID_HEX_MAX];
	FetchState state;
	uint64_t since_usec;
} FetchEntry;

struct DebuginfodFetch {
	TargetFileOpener opener;
	DebuginfodFetchLimits limits;
	char *cache_dir;
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t wake;
	bool stopping;
	FetchEntry *entries; /* in the order asked: the queue is the QUEUED ones, oldest first */
	size_t n_entries;
};

/*
 * A build-id as the cache and URL name it: lower-case hex digits, an even 4..128 of them.
 * It came from a file of the target: it must never be a path or a URL of its own.
 */
static bool build_id_is_valid(const char *hex)
{
	size_t n = strspn(hex, "0123456789abcdef");

	return hex[n] == '\0' && n % 2 == 0 && n >= 4 && n <= 2 * TARGET_FILE_BUILD_ID_MAX;
}

/* The cached file of 'build_id' as libdebuginfod stores it, if it is a whole one within the cap. */
static int open_cached(DebuginfodFetch *f, const char *build_id)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (asprintf(&path, "%s/%s/debuginfo", f->cache_dir, build_id) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	/* an empty file is libdebuginfod's record of a miss */
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return -ENOENT;
	if ((uint64_t)st.st_size > f->limits.max_bytes)
		return -EFBIG;
	return TAKE_FD(fd);
}

static FetchEntry *find_entry_locked(DebuginfodFetch *f, const char *build_id)
{
	for (size_t i = 0; i < f->n_entries; i++)
		if (strcmp(f->entries[i].build_id, build_id) == 0)
			return &f->entries[i];
	return NULL;
}

static void remove_entry_locked(DebuginfodFetch *f, FetchEntry *e)
{
	size_t i = (size_t)(e - f->entries);

	memmove(e, e + 1, (f->n_entries - i - 1) * sizeof(*e));
	f->n_entries--;
}

static unsigned count_queued_locked(DebuginfodFetch *f)
{
	unsigned n = 0;

	for (size_t i = 0; i < f->n_entries; i++)
		n += f->entries[i].state == FETCH_QUEUED;
	return n;
}

/* Forget failures old enough to be tried again. */
static void expire_failures_locked(DebuginfodFetch *f, uint64_t now)
{
	for (size_t i = 0; i < f->n_entries;) {
		FetchEntry *e = &f->entries[i];

		if (e->state == FETCH_FAILED && now - e->since_usec >= f->limits.retry_usec)
			remove_entry_locked(f, e);
		else
			i++;
	}
}

/* -EAGAIN when 'build_id' is (now) queued or being fetched, -ENOENT when it failed lately. */
static int enqueue_locked(DebuginfodFetch *f, const char *build_id)
{
	uint64_t now = clock_micros(CLOCK_MONOTONIC);
	FetchEntry *e;

	expire_failures_locked(f, now);
	e = find_entry_locked(f, build_id);
	if (e)
		return e->state == FETCH_FAILED ? -ENOENT : -EAGAIN;
	/* a flood of distinct build-ids (anyone can make files with any): the rest are asked
	 * for again by later sessions, not remembered */
	if (f->n_entries >= f->limits.max_pending || count_queued_locked(f) >= f->limits.max_queued)
		return -ENOENT;
	if (f->n_entries % 64 == 0) {
		FetchEntry *a = reallocarray(f->entries, f->n_entries + 64, sizeof(*a));

		if (!a)
			return -ENOMEM;
		f->entries = a;
	}
	e = &f->entries[f->n_entries++];
	*e = (FetchEntry){ .state = FETCH_QUEUED, .since_usec = now };
	strcpy(e->build_id, build_id);
	pthread_cond_signal(&f->wake);
	return -EAGAIN;
}

/* TargetFileOpenFn of BUILD_ID requests; never waits on the network. */
static int fetch_open(const TargetFileRequest *req, void *userdata)
{
	DebuginfodFetch *f = userdata;
	char build_id[BUILD_ID_HEX_MAX];
	int r;

	if (req->kind != TARGET_FILE_BUILD_ID || req->build_id_size < 2 ||
	    req->build_id_size > TARGET_FILE_BUILD_ID_MAX)
		return -EINVAL;
	hex_encode(req->build_id, req->build_id_size, build_id);
	if (!build_id_is_valid(build_id))
		return -EINVAL;
	r = open_cached(f, build_id);
	if (r != -ENOENT)
		return r;
	pthread_mutex_lock(&f->lock);
	r = enqueue_locked(f, build_id);
	pthread_mutex_unlock(&f->lock);
	return r;
}

StackQualityFetch debuginfod_fetch_state(DebuginfodFetch *f, const char *build_id)
{
	_cleanup_free_ char *path = NULL;
	StackQualityFetch state = STACK_QUALITY_FETCH_NOT_ASKED;
	struct stat st;
	FetchEntry *e;

	if (!build_id_is_valid(build_id) ||
	    asprintf(&path, "%s/%s/debuginfo", f->cache_dir, build_id) < 0)
		return state;
	/* an empty file is libdebuginfod's record of a miss */
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		return st.st_size > 0 ? STACK_QUALITY_FETCH_FETCHED : STACK_QUALITY_FETCH_FAILED;
	pthread_mutex_lock(&f->lock);
	e = find_entry_locked(f, build_id);
	if (e)
		state = e->state == FETCH_FAILED ? STACK_QUALITY_FETCH_FAILED
						 : STACK_QUALITY_FETCH_PENDING;
	pthread_mutex_unlock(&f->lock);
	return state;
}

/* What bounds one fetch: read by libdebuginfod's progress callback. */
typedef struct FetchProgress {
	DebuginfodFetch *f;
	uint64_t deadline_usec;
	bool too_big, too_slow;
} FetchProgress;

static bool is_stopping(DebuginfodFetch *f)
{
	bool stopping;

	pthread_mutex_lock(&f->lock);
	stopping = f->stopping;
	pthread_mutex_unlock(&f->lock);
	return stopping;
}

/* Called while a transfer runs (at least once a second): nonzero abandons it. */
static int fetch_progress(debuginfod_client *client, long done, long total)
{
	FetchProgress *p = debuginfod_get_user_data(client);
	uint64_t max = p->f->limits.max_bytes;

	p->too_big = (done > 0 && (uint64_t)done > max) || (total > 0 && (uint64_t)total > max);
	p->too_slow = clock_micros(CLOCK_MONOTONIC) >= p->deadline_usec;
	return p->too_big || p->too_slow || is_stopping(p->f);
}

static const char *fetch_failure(const FetchProgress *p, int r)
{
	if (p->too_big)
		return "larger than the size cap";
	if (p->too_slow)
		return "timed out";
	return strerror(-r);
}

/* Fetch 'build_id' into the cache: 0, or a negative errno with the reason logged. */
static int fetch_one(DebuginfodFetch *f, debuginfod_client *client, const char *build_id)
{
	FetchProgress progress = {
		.f = f,
		.deadline_usec = clock_micros(CLOCK_MONOTONIC) + f->limits.timeout_usec,
	};
	_cleanup_free_ char *path = NULL;
	int fd, r;

	debuginfod_set_user_data(client, &progress);
	/* a length of 0: the build-id as hex, which libdebuginfod puts in the URL and the cache path */
	fd = debuginfod_find_debuginfo(client, (const unsigned char *)build_id, 0, &path);
	r = fd < 0 ? fd : 0;
	safe_close(fd);
	/* what landed in the cache is what requests will get: only a whole file within the cap */
	if (r >= 0) {
		fd = open_cached(f, build_id);
		r = fd < 0 ? fd : 0;
		safe_close(fd);
		progress.too_big = r == -EFBIG;
	}
	if (r >= 0)
		log_info("fetched the debug info of build-id %s from debuginfod", build_id);
	else if (!is_stopping(f))
		log_notice("cannot fetch the debug info of build-id %s from debuginfod: %s", build_id,
			   fetch_failure(&progress, r));
	return r;
}

/* The oldest queued build-id, now marked running; NULL when stopping. Waits for one. */
static FetchEntry *next_locked(DebuginfodFetch *f)
{
	for (;;) {
		if (f->stopping)
			return NULL;
		for (size_t i = 0; i < f->n_entries; i++)
			if (f->entries[i].state == FETCH_QUEUED) {
				f->entries[i].state = FETCH_RUNNING;
				return &f->entries[i];
			}
		pthread_cond_wait(&f->wake, &f->lock);
	}
}

static void *fetch_thread(void *userdata)
{
	DebuginfodFetch *f = userdata;
	debuginfod_client *client = debuginfod_begin();
	char build_id[BUILD_ID_HEX_MAX];
	FetchEntry *e;
	int r;

	if (!client)
		log_error("cannot start the debuginfod client: %s", strerror(ENOMEM));
	else
		debuginfod_set_progressfn(client, fetch_progress);
	pthread_mutex_lock(&f->lock);
	while ((e = next_locked(f))) {
		strcpy(build_id, e->build_id);
		pthread_mutex_unlock(&f->lock);
		r = client ? fetch_one(f, client, build_id) : -ENOMEM;
		pthread_mutex_lock(&f->lock);
		/* entries move as others are added and removed: find it again */
		e = find_entry_locked(f, build_id);
		if (e && r >= 0)
			remove_entry_locked(f, e); /* the cache has it now */
		else if (e) {
			e->state = FETCH_FAILED;
			e->since_usec = clock_micros(CLOCK_MONOTONIC);
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (client)
		debuginfod_end(client);
	return NULL;
}

int debuginfod_fetch_new(const char *cache_dir, const DebuginfodFetchLimits *limits,
			 DebuginfodFetch **ret)
{
	_cleanup_(debuginfod_fetch_freep) DebuginfodFetch *f = calloc(1, sizeof(*f));
	_cleanup_close_ int dir_fd = -1;
	int r;

	if (!f)
		return -ENOMEM;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->wake, NULL);
	f->limits = *limits;
	f->opener = (TargetFileOpener){ fetch_open, f };
	f->cache_dir = strdup(cache_dir);
	if (!f->cache_dir)
		return -ENOMEM;
	/* profd's alone: what lies there is handed to unwinders as the debug file of a build-id */
	dir_fd = open_private_dir(AT_FDCWD, cache_dir, 0700);
	if (dir_fd < 0)
		return dir_fd;
	if (setenv("DEBUGINFOD_CACHE_PATH", cache_dir, 1) < 0)
		return negative_errno();
	r = -pthread_create(&f->thread, NULL, fetch_thread, f);
	if (r < 0)
		return r;
	f->thread_started = true;
	*ret = TAKE_PTR(f);
	return 0;
}

DebuginfodFetch *debuginfod_fetch_free(DebuginfodFetch *f)
{
	if (!f)
		return NULL;
	if (f->thread_started) {
		pthread_mutex_lock(&f->lock);
		f->stopping = true;
		pthread_cond_signal(&f->wake);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->thread, NULL);
	}
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	free(f->entries);
	free(f->cache_dir);
	free(f);
	return NULL;
}

const TargetFileOpener *debuginfod_fetch_opener(DebuginfodFetch *f)
{
	return &f->opener;
}
