/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "symbol-store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "atomic-file.h"
#include "cleanup.h"
#include "parse-number.h"

#define SYMBOLS_DIR "symbols"
#define SHARED_DIR "shared"
#define TMP_SUFFIX ".tmp"

/* What a directory holds; it is opened for each use (no descriptor per uid stays open). */
typedef struct ScopeDir {
	uint32_t scope;
	uint64_t bytes;
} ScopeDir;

struct SymbolStore {
	pthread_mutex_t lock;
	int fd; /* symbols/ */
	ScopeDir *dirs;
	size_t n_dirs, n_allocated;
	uint64_t bytes, max_bytes;
	SymbolCacheStore interface;
};

static void scope_name(uint32_t scope, char ret[16])
{
	if (scope == SYMBOL_SCOPE_SHARED)
		snprintf(ret, 16, SHARED_DIR);
	else
		snprintf(ret, 16, "%" PRIu32, scope);
}

/* "shared", or a uid in canonical decimal */
static bool parse_scope(const char *name, uint32_t *ret)
{
	uint64_t v;

	if (strcmp(name, SHARED_DIR) == 0) {
		*ret = SYMBOL_SCOPE_SHARED;
		return true;
	}
	if ((name[0] == '0' && name[1]) || parse_u64(name, &v) < 0 || v >= SYMBOL_SCOPE_SHARED)
		return false;
	*ret = (uint32_t)v;
	return true;
}

static bool is_tmp(const char *name)
{
	size_t n = strlen(name);

	return n >= strlen(TMP_SUFFIX) && strcmp(name + n - strlen(TMP_SUFFIX), TMP_SUFFIX) == 0;
}

/*
 * Walk the regular files of a directory: their total size, and the least recently used
 * one (its name in ret_oldest, when given). Leftover temporary files go.
 */
static int scan_dir(int fd, uint64_t *ret_bytes, char *ret_oldest, size_t oldest_size)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct timespec oldest = { .tv_sec = INT64_MAX };
	struct dirent *de;
	uint64_t bytes = 0;
	int r;

	r = dir_fd_open_stream(fd, &d);
	if (r < 0)
		return r;
	if (ret_oldest)
		ret_oldest[0] = '\0';
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.' ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (is_tmp(de->d_name)) {
			(void)unlinkat(fd, de->d_name, 0);
			continue;
		}
		bytes += (uint64_t)st.st_size;
		if (ret_oldest && (st.st_mtim.tv_sec < oldest.tv_sec ||
				   (st.st_mtim.tv_sec == oldest.tv_sec &&
				    st.st_mtim.tv_nsec < oldest.tv_nsec))) {
			oldest = st.st_mtim;
			snprintf(ret_oldest, oldest_size, "%s", de->d_name);
		}
	}
	*ret_bytes = bytes;
	return 0;
}

static ScopeDir *find_dir(SymbolStore *s, uint32_t scope)
{
	for (size_t i = 0; i < s->n_dirs; i++)
		if (s->dirs[i].scope == scope)
			return &s->dirs[i];
	return NULL;
}

static int open_scope_dir(SymbolStore *s, uint32_t scope, bool create)
{
	char name[16];

	scope_name(scope, name);
	return open_private_dir(s->fd, name, create ? 0700 : 0);
}

/* The directory of 'scope' (made, with 'create'), open in *ret_fd; counted on first use. */
static int get_dir(SymbolStore *s, uint32_t scope, bool create, ScopeDir **ret, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	ScopeDir *d = find_dir(s, scope);
	uint64_t bytes;
	int r;

	fd = open_scope_dir(s, scope, create);
	if (fd < 0)
		return fd;
	if (!d) {
		r = scan_dir(fd, &bytes, NULL, 0);
		if (r < 0)
			return r;
		if (ARRAY_RESERVE(s->dirs, s->n_allocated, s->n_dirs + 1, 8) < 0)
			return -ENOMEM;
		d = &s->dirs[s->n_dirs++];
		*d = (ScopeDir){ .scope = scope, .bytes = bytes };
		s->bytes += bytes;
	}
	*ret = d;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* A caller's share: a quarter; system files have the whole cap. */
static uint64_t share_of(const SymbolStore *s, const ScopeDir *d)
{
	return d->scope == SYMBOL_SCOPE_SHARED ? s->max_bytes : s->max_bytes / 4;
}

/* The directory to take a file from: over its share, else the largest while over the cap. */
static ScopeDir *pick_victim(SymbolStore *s)
{
	ScopeDir *largest = NULL;

	for (size_t i = 0; i < s->n_dirs; i++) {
		ScopeDir *d = &s->dirs[i];

		if (d->bytes > share_of(s, d))
			return d;
		if (!largest || d->bytes > largest->bytes)
			largest = d;
	}
	return s->bytes > s->max_bytes ? largest : NULL;
}

static void trim(SymbolStore *s)
{
	ScopeDir *d;

	while ((d = pick_victim(s))) {
		_cleanup_close_ int fd = open_scope_dir(s, d->scope, false);
		char oldest[NAME_MAX + 1];
		struct stat st;
		uint64_t bytes;

		if (fd < 0 || scan_dir(fd, &bytes, oldest, sizeof(oldest)) < 0)
			break;
		/* what the directory really holds (a file may have vanished meanwhile) */
		s->bytes = s->bytes - d->bytes + bytes;
		d->bytes = bytes;
		if (!oldest[0] || fstatat(fd, oldest, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    unlinkat(fd, oldest, 0) < 0)
			break;
		d->bytes -= (uint64_t)st.st_size;
		s->bytes -= (uint64_t)st.st_size;
	}
}

static int store_load(void *userdata, const ModuleIdentity *id, const char *name,
		      void **ret_data, size_t *ret_size)
{
	SymbolStore *s = userdata;
	_cleanup_close_ int dir_fd = -1, fd = -1;
	char *data = NULL;
	ScopeDir *d;
	int r;

	pthread_mutex_lock(&s->lock);
	r = get_dir(s, id->scope, false, &d, &dir_fd);
	if (r >= 0)
		r = fd = open_regular_at(dir_fd, name);
	if (r >= 0)
		r = read_fd_full(fd, s->max_bytes, &data, ret_size);
	/* the newer the mtime, the later it is evicted */
	if (r >= 0)
		(void)futimens(fd, NULL);
	pthread_mutex_unlock(&s->lock);
	if (r < 0)
		return r;
	*ret_data = data;
	return 0;
}

/* Write 'name' through a temporary file and a rename: never half a file under the name. */
static int replace_file(int dir_fd, const char *name, const void *data, size_t size)
{
	_cleanup_close_ int fd = -1;
	char tmp[NAME_MAX + 1];
	int r;

	if (snprintf(tmp, sizeof(tmp), "%s" TMP_SUFFIX, name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	(void)unlinkat(dir_fd, tmp, 0);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return negative_errno();
	r = write_all(fd, data, size);
	if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = negative_errno();
	if (r < 0)
		(void)unlinkat(dir_fd, tmp, 0);
	return r;
}

static int store_save(void *userdata, const ModuleIdentity *id, const char *name, const void *data,
		      size_t size)
{
	SymbolStore *s = userdata;
	_cleanup_close_ int dir_fd = -1;
	struct stat st;
	uint64_t old = 0;
	ScopeDir *d;
	int r;

	pthread_mutex_lock(&s->lock);
	r = get_dir(s, id->scope, true, &d, &dir_fd);
	if (r >= 0 && size > share_of(s, d))
		r = -EFBIG;
	if (r >= 0 && fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		old = (uint64_t)st.st_size;
	if (r >= 0)
		r = replace_file(dir_fd, name, data, size);
	if (r >= 0) {
		d->bytes = d->bytes - old + size;
		s->bytes = s->bytes - old + size;
		trim(s);
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

SymbolStore *symbol_store_free(SymbolStore *s)
{
	if (!s)
		return NULL;
	free(s->dirs);
	safe_close(s->fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(SymbolStore *, symbol_store_free);

int symbol_store_new(int state_fd, uint64_t max_bytes, SymbolStore **ret)
{
	_cleanup_(symbol_store_freep) SymbolStore *s = calloc(1, sizeof(*s));
	_cleanup_(closedirp) DIR *dir = NULL;
	struct dirent *de;
	int r;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->max_bytes = max_bytes;
	s->interface = (SymbolCacheStore){ store_load, store_save, s };
	r = s->fd = open_private_dir(state_fd, SYMBOLS_DIR, 0700);
	if (r < 0)
		return r;
	/* what an earlier run left, within today's cap */
	r = dir_fd_open_stream(s->fd, &dir);
	if (r < 0)
		return r;
	while ((de = readdir(dir))) {
		ScopeDir *d;
		uint32_t scope;
		int fd;

		if (parse_scope(de->d_name, &scope) && get_dir(s, scope, false, &d, &fd) >= 0)
			safe_close(fd);
	}
	trim(s);
	*ret = TAKE_PTR(s);
	return 0;
}

const SymbolCacheStore *symbol_store_interface(SymbolStore *s)
{
	return &s->interface;
}

uint64_t symbol_store_bytes(SymbolStore *s)
{
	uint64_t bytes;

	pthread_mutex_lock(&s->lock);
	bytes = s->bytes;
	pthread_mutex_unlock(&s->lock);
	return bytes;
}
