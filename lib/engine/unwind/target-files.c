/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "target-files.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "hex.h"
#include "kernel-table.h"
#include "process-maps.h"

static const char *const default_debug_dirs[] = { "/usr/lib/debug", NULL };

const TargetFileOpener target_file_opener_default = { target_file_open, NULL };

/* A "Name:\tv1\tv2..." line of /proc/PID/status, its first 'n' numbers. */
static int read_status_numbers(uint32_t pid, const char *field, unsigned long *ret, size_t n)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t size = 0, len = strlen(field);
	char path[64];

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : negative_errno();
	while (getline(&line, &size, f) > 0) {
		char *p = line + len;
		size_t i;

		if (strncmp(line, field, len) != 0)
			continue;
		for (i = 0; i < n; i++) {
			char *end;

			ret[i] = strtoul(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		return (int)i;
	}
	return -ENOENT;
}

int target_owner_read(uint32_t pid, TargetOwner *ret)
{
	unsigned long uids[4];
	int r = read_status_numbers(pid, "Uid:", uids, 4);

	if (r < 0)
		return r;
	if (r < 4)
		return -EBADMSG;
	*ret = (TargetOwner){ { (uint32_t)uids[0], (uint32_t)uids[1], (uint32_t)uids[3] } };
	return 0;
}

uint32_t target_namespace_pid(uint32_t pid)
{
	unsigned long ns[32];
	int r = read_status_numbers(pid, "NSpid:", ns, ELEMENTSOF(ns));

	/* the last one is the innermost namespace's */
	return r > 0 && ns[r - 1] > 0 ? (uint32_t)ns[r - 1] : pid;
}

static bool owned_by(const struct stat *st, const TargetOwner *owner)
{
	if (st->st_uid == 0)
		return true;
	for (size_t i = 0; i < ELEMENTSOF(owner->uids); i++)
		if ((uint32_t)st->st_uid == owner->uids[i])
			return true;
	return false;
}

/*
 * Could the target read the file itself, by its owner and mode? Being root's
 * is not enough: root's private files lie beside files any target may map
 * (/etc/shadow beside /etc/passwd, a key beside /etc/ssh/ssh_config) and a
 * target can bind-mount them over its perf map in a mount namespace of its
 * own. Group read is not honoured: debug files are world-readable.
 */
static bool readable_by(const struct stat *st, const TargetOwner *owner)
{
	if (st->st_mode & S_IROTH)
		return true;
	for (size_t i = 0; i < ELEMENTSOF(owner->uids); i++)
		if ((uint32_t)st->st_uid == owner->uids[i] && (st->st_mode & S_IRUSR))
			return true;
	return false;
}

#define OPEN_NAMED_FLAGS (O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)

/*
 * 'path' (absolute) in the root of process 'pid', every directory on the way
 * opened without following a symlink: an absolute link there would resolve
 * in profd's root, not the target's (a container's /tmp linked to a host
 * directory). Not openat2(RESOLVE_IN_ROOT): profd.service's seccomp filter
 * makes it fail with ENOSYS (see sampling-target.c).
 */
static int open_in_root(uint32_t pid, const char *path)
{
	_cleanup_close_ int dir = -1;
	char root[48];

	snprintf(root, sizeof(root), "/proc/%" PRIu32 "/root", pid);
	dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	for (const char *p = path + strspn(path, "/");;) {
		size_t len = strcspn(p, "/");
		char name[NAME_MAX + 1];
		int next;

		if (len == 0 || len > NAME_MAX || (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		p += strspn(p, "/");
		if (!*p) {
			next = openat(dir, name, OPEN_NAMED_FLAGS);
			return next < 0 ? negative_errno() : next;
		}
		next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return errno == ENOTDIR ? -ELOOP : negative_errno();
		safe_close(dir);
		dir = next;
	}
}

/*
 * Open a file the target names, in the root of process 'root_of' (0: in
 * ours): not through a symlink, never blocking (a FIFO planted in its
 * place), a regular file of the target's uid or root that the target could
 * read, at most 'max' bytes.
 */
static int open_owned(uint32_t root_of, const char *path, const TargetOwner *owner, uint64_t max)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (root_of)
		fd = open_in_root(root_of, path);
	else if ((fd = open(path, OPEN_NAMED_FLAGS)) < 0)
		fd = negative_errno();
	if (fd < 0)
		return fd == -ELOOP ? -EPERM : fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode) || !owned_by(&st, owner) || !readable_by(&st, owner))
		return -EPERM;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	return TAKE_FD(fd);
}

static bool is_identity(const TargetFileRequest *req, const ProcessMapping *m)
{
	/* no identity in the request: any file */
	return req->inode == 0 || (m->inode == req->inode && m->dev_major == req->dev_major &&
				   m->dev_minor == req->dev_minor);
}

/*
 * The target's file mapping covering the request's address (a copy), from its
 * maps as they are now; it must be the file the request names by identity.
 */
static int find_mapping(const TargetFileRequest *req, ProcessMapping *ret, char **ret_path)
{
	uint32_t pid = req->pid;
	uint64_t address = req->address;
	_cleanup_(process_maps_freep) ProcessMaps *maps = NULL;
	const ProcessMapping *m;
	int r;

	r = process_maps_load(pid, &maps);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	m = process_maps_find(maps, address);
	if (!m || !m->path || m->path[0] != '/' || !is_identity(req, m))
		return -ENOENT;
	*ret_path = strdup(m->path);
	if (!*ret_path)
		return -ENOMEM;
	*ret = *m;
	ret->path = NULL;
	return 0;
}

/* 'path' when it is the file of mapping 'm' (same device and inode), else -ENOENT. */
static int open_identical(const char *path, const ProcessMapping *m)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == m->inode &&
	    st.st_dev == makedev(m->dev_major, m->dev_minor))
		return TAKE_FD(fd);
	return -ENOENT;
}

/*
 * The file the target maps at 'm': by its path under the target's root when
 * that still is the mapped file (same device and inode); for a target that is
 * gone (its mapping known from its MMAP2 record), by the path in our root when
 * that is the same file; else through the kernel's own reference to the
 * mapping (deleted or replaced files).
 */
int target_file_open_mapped(uint32_t pid, const ProcessMapping *m, const char *path)
{
	_cleanup_free_ char *rooted = NULL;
	_cleanup_close_ int fd = -1;
	char map_file[96];
	struct stat st;

	if (asprintf(&rooted, "/proc/%" PRIu32 "/root%s", pid, path) < 0)
		return -ENOMEM;
	fd = open_identical(rooted, m);
	if (fd >= 0)
		return TAKE_FD(fd);
	snprintf(map_file, sizeof(map_file), "/proc/%" PRIu32 "/root", pid);
	if (access(map_file, F_OK) < 0 && errno == ENOENT)
		return open_identical(path, m);
	snprintf(map_file, sizeof(map_file), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64,
		 pid, m->start, m->end);
	fd = open(map_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EPERM;
	return TAKE_FD(fd);
}

bool target_file_is_jitdump(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t digits;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4) != 0)
		return false;
	digits = strspn(base + 4, "0123456789");
	return digits > 0 && strcmp(base + 4 + digits, ".dump") == 0;
}

bool target_mapping_has_file(const ProcessMapping *m)
{
	return m->path && m->path[0] == '/' && m->path[1] != '/';
}

static int open_mapped_kind(const TargetFileRequest *req)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	ProcessMapping m;
	TargetOwner owner;
	struct stat st;
	int r;

	r = find_mapping(req, &m, &path);
	if (r < 0)
		return r;
	if (req->kind == TARGET_FILE_MAPPED)
		return target_file_open_mapped(req->pid, &m, path);

	/* a jitdump file is the target's own writing: owner and size rules too */
	if (!target_file_is_jitdump(path))
		return -EPERM;
	r = target_owner_read(req->pid, &owner);
	if (r < 0)
		return r;
	fd = target_file_open_mapped(req->pid, &m, path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!owned_by(&st, &owner))
		return -EPERM;
	if ((uint64_t)st.st_size > TARGET_FILE_JITDUMP_MAX)
		return -EFBIG;
	return TAKE_FD(fd);
}

/* Try 'path' (in the root of 'root_of', 0: ours); keep the first success, or the most telling
 * error so far. */
static bool try_candidate(uint32_t root_of, const char *path, const TargetOwner *owner,
			  int *fd_or_error)
{
	int fd = open_owned(root_of, path, owner, TARGET_FILE_DEBUG_MAX);

	if (fd >= 0) {
		*fd_or_error = fd;
		return true;
	}
	if (fd != -ENOENT && fd != -ENOTDIR)
		*fd_or_error = fd;
	return false;
}

/* Beside the mapped file 'path' in the root of 'root_of' (0: ours), then in its .debug/. */
static bool try_beside(const TargetFileRequest *req, const TargetOwner *owner, uint32_t root_of,
		       const char *path, int dir_len, int *fd_or_error)
{
	static const char *const beside[] = { "", "/.debug" };

	for (size_t i = 0; i < ELEMENTSOF(beside); i++) {
		_cleanup_free_ char *candidate = NULL;

		if (asprintf(&candidate, "%.*s%s/%s", dir_len, path, beside[i], req->name) < 0) {
			*fd_or_error = -ENOMEM;
			return true;
		}
		if (try_candidate(root_of, candidate, owner, fd_or_error))
			return true;
	}
	return false;
}

/*
 * Beside the mapped file 'path' (mapped at 'm', NULL if unknown), in its
 * .debug/, then under each debug directory + its directory. Beside it in the
 * target's root; failing that, in ours when 'path' is the mapped file there:
 * /proc/PID/maps names a chroot'd target's files from the reader's root.
 */
static int open_debuglink(const TargetFileRequest *req, const char *const *debug_dirs,
			  const TargetOwner *owner, const char *path, const ProcessMapping *m)
{
	_cleanup_close_ int ours = -1;
	const char *slash;
	int result = -ENOENT;
	int dir_len;

	slash = strrchr(path, '/');
	dir_len = (int)(slash - path);
	if (try_beside(req, owner, req->pid, path, dir_len, &result))
		return result;
	ours = m ? open_identical(path, m) : -ENOENT;
	if (ours >= 0 && try_beside(req, owner, 0, path, dir_len, &result))
		return result;
	for (const char *const *d = debug_dirs; *d; d++) {
		_cleanup_free_ char *candidate = NULL;

		if (asprintf(&candidate, "%s%.*s/%s", *d, dir_len, path, req->name) < 0)
			return -ENOMEM;
		if (try_candidate(0, candidate, owner, &result))
			return result;
	}
	return result;
}

static int open_build_id(const TargetFileRequest *req, const char *const *debug_dirs,
			 const TargetOwner *owner)
{
	char hex[HEX_ENCODED_SIZE(TARGET_FILE_BUILD_ID_MAX)];
	int result = -ENOENT;

	hex_encode(req->build_id, req->build_id_size, hex);
	for (const char *const *d = debug_dirs; *d; d++) {
		_cleanup_free_ char *candidate = NULL;

		if (asprintf(&candidate, "%s/.build-id/%.2s/%s.debug", *d, hex, hex + 2) < 0)
			return -ENOMEM;
		if (try_candidate(0, candidate, owner, &result))
			return result;
	}
	return result;
}

/* 'name' lies inside 'dir' as written: below it and without "." or ".." components. */
static bool is_inside(const char *name, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (strncmp(name, dir, len) != 0 || name[len] != '/')
		return false;
	for (const char *p = name + len; *p;) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
	}
	return true;
}

static int open_debug_alt(const TargetFileRequest *req, const char *const *debug_dirs,
			  const TargetOwner *owner)
{
	for (const char *const *d = debug_dirs; *d; d++)
		if (is_inside(req->name, *d))
			return open_owned(0, req->name, owner, TARGET_FILE_DEBUG_MAX);
	return -EPERM;
}

static int open_perf_map(const TargetFileRequest *req)
{
	_cleanup_free_ char *path = NULL;
	TargetOwner owner;
	int r;

	r = target_owner_read(req->pid, &owner);
	if (r < 0)
		return r;
	/* its own /tmp, in its root: right for containers and private /tmp alike */
	if (asprintf(&path, "/tmp/perf-%" PRIu32 ".map", target_namespace_pid(req->pid)) < 0)
		return -ENOMEM;
	return open_owned(req->pid, path, &owner, TARGET_FILE_PERF_MAP_MAX);
}

static int open_kernel_file(const char *path, const TargetFilePolicy *policy)
{
	int fd;

	if (policy && policy->no_kernel_symbols)
		return -EPERM;
	/* kallsyms read once for everyone, if the policy has it (else, or if that fails, now) */
	if (policy && policy->kernel_table && strcmp(path, "/proc/kallsyms") == 0) {
		fd = kernel_table_open(policy->kernel_table);
		if (fd >= 0)
			return fd;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? negative_errno() : fd;
}

static bool is_basename(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

static int validate(const TargetFileRequest *req)
{
	size_t name_len = strnlen(req->name, sizeof(req->name));

	if (req->kind >= _TARGET_FILE_KIND_MAX || name_len == sizeof(req->name))
		return -EINVAL;
	if (req->pid == 0 && req->kind != TARGET_FILE_KALLSYMS &&
	    req->kind != TARGET_FILE_KERNEL_NOTES)
		return -EINVAL;
	switch (req->kind) {
	case TARGET_FILE_DEBUGLINK:
		return is_basename(req->name) ? 0 : -EINVAL;
	case TARGET_FILE_BUILD_ID:
		return req->build_id_size >= 2 && req->build_id_size <= TARGET_FILE_BUILD_ID_MAX
			       ? 0
			       : -EINVAL;
	case TARGET_FILE_DEBUG_ALT:
		return req->name[0] == '/' ? 0 : -EINVAL;
	default:
		return 0;
	}
}

static const char *const *policy_debug_dirs(const TargetFilePolicy *policy)
{
	return policy && policy->debug_dirs ? policy->debug_dirs : default_debug_dirs;
}

/* 'fd', or what the substitute hands over instead of it. */
static int substitute_debug_file(const TargetFileRequest *req, const DebugFileSubstitute *sub,
				 int fd)
{
	int other = sub->substitute(req, fd, sub->userdata);

	if (other < 0)
		return fd;
	safe_close(fd);
	return other;
}

/*
 * Debug files: by the target's owner, and for debuglinks the path of the file
 * it maps (and that mapping, if the target still runs).
 */
static int open_debug_kind(const TargetFileRequest *req, const TargetFilePolicy *policy,
			   const TargetOwner *owner, const char *mapped_path,
			   const ProcessMapping *m)
{
	const char *const *debug_dirs = policy_debug_dirs(policy);
	int r;

	switch (req->kind) {
	case TARGET_FILE_DEBUGLINK:
		return mapped_path ? open_debuglink(req, debug_dirs, owner, mapped_path, m) : -ESRCH;
	case TARGET_FILE_BUILD_ID:
		r = open_build_id(req, debug_dirs, owner);
		if (r >= 0 && policy && policy->debug_substitute)
			r = substitute_debug_file(req, policy->debug_substitute, r);
		if (r == -ENOENT && policy && policy->fetch)
			r = target_file_opener_open(policy->fetch, req);
		return r;
	case TARGET_FILE_DEBUG_ALT:
		return open_debug_alt(req, debug_dirs, owner);
	case TARGET_FILE_KALLSYMS:
		return open_kernel_file("/proc/kallsyms", policy);
	case TARGET_FILE_KERNEL_NOTES:
		return open_kernel_file("/sys/kernel/notes", policy);
	}
	/* mapped files and the perf map: only the target itself can vouch for them */
	return -ESRCH;
}

int target_file_open_remembered(const TargetFileRequest *request, const TargetFilePolicy *policy,
				const TargetOwner *owner, const char *mapped_path)
{
	int r = validate(request);

	return r < 0 ? r : open_debug_kind(request, policy, owner, mapped_path, NULL);
}

int target_file_open(const TargetFileRequest *request, void *userdata)
{
	const TargetFilePolicy *policy = userdata;
	_cleanup_free_ char *path = NULL;
	TargetOwner owner = {};
	ProcessMapping m;
	int r;

	r = validate(request);
	if (r < 0)
		return r;
	switch (request->kind) {
	case TARGET_FILE_MAPPED:
	case TARGET_FILE_JITDUMP:
		return open_mapped_kind(request);
	case TARGET_FILE_PERF_MAP:
		return open_perf_map(request);
	case TARGET_FILE_DEBUGLINK:
		r = find_mapping(request, &m, &path);
		if (r < 0)
			return r;
		break;
	default:
		break;
	}
	if (request->pid != 0) {
		r = target_owner_read(request->pid, &owner);
		if (r < 0)
			return r;
	}
	return open_debug_kind(request, policy, &owner, path, path ? &m : NULL);
}
