/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sampling-target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "dir-stream.h"
#include "io-util.h"
#include "task-list.h"

/* cgroup.max.depth is unbounded by default; a walk deeper than this is refused. */
#define CGROUP_MAX_DEPTH 64

SamplingTarget *sampling_target_free(SamplingTarget *t)
{
	if (!t)
		return NULL;
	free(t->cgroup);
	safe_close(t->cgroup_fd);
	free(t->excluded);
	free(t->unit);
	free(t);
	return NULL;
}

int sampling_target_set_unit(SamplingTarget *t, const char *unit)
{
	char *u;

	if (t->kind != SAMPLING_TARGET_CGROUP)
		return -EINVAL;
	u = strdup(unit);
	if (!u)
		return -ENOMEM;
	free(t->unit);
	t->unit = u;
	return 0;
}

static int target_alloc(SamplingTargetKind kind, SamplingTarget **ret)
{
	SamplingTarget *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->kind = kind;
	t->cgroup_fd = -1;
	*ret = t;
	return 0;
}

int sampling_target_new_pid(pid_t pid, SamplingTarget **ret)
{
	SamplingTarget *t;
	int r;

	if (pid <= 0)
		return -ESRCH;
	r = target_alloc(SAMPLING_TARGET_PID, &t);
	if (r < 0)
		return r;
	t->pid = pid;
	*ret = t;
	return 0;
}

int sampling_target_new_system(const pid_t *excluded, size_t n_excluded, SamplingTarget **ret)
{
	_cleanup_(sampling_target_freep) SamplingTarget *t = NULL;
	int r;

	r = target_alloc(SAMPLING_TARGET_SYSTEM, &t);
	if (r < 0)
		return r;
	if (n_excluded > 0) {
		t->excluded = calloc(n_excluded, sizeof(pid_t));
		if (!t->excluded)
			return -ENOMEM;
		memcpy(t->excluded, excluded, n_excluded * sizeof(pid_t));
		t->n_excluded = n_excluded;
	}
	*ret = TAKE_PTR(t);
	return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *p = s; *p;) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 4;
		} else
			*w++ = *p++;
	}
	*w = '\0';
}

int cgroup2_mount_point(char **ret)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t size = 0;

	if (!f)
		return negative_errno();
	/* "36 25 0:30 / /sys/fs/cgroup/unified rw,... shared:10 - cgroup2 cgroup2 rw,..." */
	while (getline(&line, &size, f) > 0) {
		char mount[PATH_MAX], *sep = strstr(line, " - ");
		char *m;

		if (!sep || strncmp(sep, " - cgroup2 ", 11) != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mount) != 1)
			continue;
		unescape_octal(mount);
		m = strdup(mount);
		if (!m)
			return -ENOMEM;
		*ret = m;
		return 0;
	}
	return -ENOENT;
}

static bool has_control_chars(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

int cgroup_path_normalize(const char *mount, const char *path, char **ret)
{
	_cleanup_free_ char *out = NULL;
	size_t mlen = strlen(mount), n = 0;
	const char *p = path;

	if (!path || !*path || strlen(path) >= PATH_MAX || has_control_chars(path))
		return -EINVAL;
	while (mlen > 1 && mount[mlen - 1] == '/')
		mlen--;
	if (strncmp(path, mount, mlen) == 0 && (path[mlen] == '/' || path[mlen] == '\0'))
		p = path + mlen;

	out = malloc(strlen(p) + 2);
	if (!out)
		return -ENOMEM;
	/* component by component: no ".", "..", and no empty ones kept */
	while (*p) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		out[n++] = '/';
		memcpy(out + n, p, len);
		n += len;
		p += len;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	*ret = TAKE_PTR(out);
	return 0;
}

static int mount_id(int fd, uint64_t *ret)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
		return negative_errno();
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	*ret = stx.stx_mnt_id;
	return 0;
}

/*
 * The cgroup directory 'rel' ("/" first, normalized: no "." or "..") beneath
 * the mount, component by component: never through a symlink, never onto
 * another mount. Not openat2(RESOLVE_BENEATH...): systemd's RestrictSUIDSGID=
 * (profd.service has it) makes openat2 fail with ENOSYS, as seccomp cannot
 * look into struct open_how.
 */
static int cgroup_open(const char *mount, const char *rel, int *ret_fd)
{
	_cleanup_close_ int dir = -1, fd = -1;
	uint64_t root_mnt, mnt;
	struct statfs sfs;
	int r;

	dir = open(mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return negative_errno();
	r = mount_id(dir, &root_mnt);
	if (r < 0)
		return r;
	for (const char *p = rel + strspn(rel, "/"); *p; p += strspn(p, "/")) {
		size_t len = strcspn(p, "/");
		char name[NAME_MAX + 1];
		int next;

		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return errno == ELOOP ? -EINVAL : negative_errno();
		safe_close(dir);
		dir = next;
		r = mount_id(dir, &mnt);
		if (r < 0)
			return r;
		if (mnt != root_mnt)
			return -EINVAL;
	}
	fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	if (fstatfs(fd, &sfs) < 0)
		return negative_errno();
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int sampling_target_new_cgroup(const char *path, SamplingTarget **ret)
{
	_cleanup_(sampling_target_freep) SamplingTarget *t = NULL;
	_cleanup_free_ char *mount = NULL;
	struct stat st;
	int r;

	r = cgroup2_mount_point(&mount);
	if (r < 0)
		return r == -ENOENT ? -EMEDIUMTYPE : r;
	r = target_alloc(SAMPLING_TARGET_CGROUP, &t);
	if (r < 0)
		return r;
	r = cgroup_path_normalize(mount, path, &t->cgroup);
	if (r < 0)
		return r;
	r = cgroup_open(mount, t->cgroup, &t->cgroup_fd);
	if (r < 0)
		return r;
	if (fstat(t->cgroup_fd, &st) < 0)
		return negative_errno();
	t->cgroup_id = st.st_ino;
	*ret = TAKE_PTR(t);
	return 0;
}

const char *sampling_target_kind_to_string(SamplingTargetKind kind)
{
	switch (kind) {
	case SAMPLING_TARGET_PID:
		return "pid";
	case SAMPLING_TARGET_CGROUP:
		return "cgroup";
	case SAMPLING_TARGET_SYSTEM:
		return "system";
	}
	return NULL;
}

int sampling_target_describe(const SamplingTarget *t, char **ret)
{
	int r;

	switch (t->kind) {
	case SAMPLING_TARGET_PID:
		r = asprintf(ret, "pid:%d", (int)t->pid);
		break;
	case SAMPLING_TARGET_CGROUP:
		r = t->unit ? asprintf(ret, "unit:%s", t->unit) : asprintf(ret, "cgroup:%s", t->cgroup);
		break;
	default:
		r = asprintf(ret, "system");
		break;
	}
	return r < 0 ? -ENOMEM : 0;
}

bool sampling_target_is_multi_process(const SamplingTarget *t)
{
	return t->kind != SAMPLING_TARGET_PID;
}

bool sampling_target_excludes(const SamplingTarget *t, pid_t pid)
{
	if (t->kind != SAMPLING_TARGET_SYSTEM)
		return false;
	if (pid == getpid())
		return true;
	for (size_t i = 0; i < t->n_excluded; i++)
		if (t->excluded[i] == pid)
			return true;
	return false;
}

typedef struct PidList {
	pid_t *pids;
	size_t n, allocated;
} PidList;

static int pid_list_add(PidList *l, pid_t pid)
{
	int r = ARRAY_RESERVE(l->pids, l->allocated, l->n + 1, 64);

	if (r < 0)
		return r;
	l->pids[l->n++] = pid;
	return 0;
}

static int read_cgroup_procs(int dir_fd, PidList *l)
{
	_cleanup_fclose_ FILE *f = NULL;
	int fd, pid, r;

	fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return negative_errno();
	r = fdopen_take(fd, "re", &f);
	if (r < 0)
		return r;
	while (fscanf(f, "%d", &pid) == 1) {
		if (pid <= 0)
			continue;
		r = pid_list_add(l, pid);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The processes of the cgroup at dir_fd and of every cgroup below it. */
static int walk_cgroup(int dir_fd, unsigned depth, PidList *l)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int r;

	if (depth > CGROUP_MAX_DEPTH)
		return -ELOOP;
	r = read_cgroup_procs(dir_fd, l);
	if (r < 0)
		return r;
	r = dir_fd_open_stream(dir_fd, &d);
	if (r < 0)
		return r;
	while ((errno = 0, de = readdir(d))) {
		_cleanup_close_ int child = -1;

		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		child = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (child < 0) {
			if (errno == ENOENT)
				continue; /* removed meanwhile */
			return negative_errno();
		}
		r = walk_cgroup(child, depth + 1, l);
		if (r < 0 && r != -ENOENT && r != -ENODEV)
			return r; /* ENODEV: removed while read */
	}
	return errno != 0 ? negative_errno() : 0;
}

static int pid_compare(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int sampling_target_list_processes(const SamplingTarget *t, pid_t **ret, size_t *ret_n)
{
	PidList l = {};
	size_t n = 0;
	int r;

	switch (t->kind) {
	case SAMPLING_TARGET_PID:
		r = pid_list_add(&l, t->pid);
		break;
	case SAMPLING_TARGET_CGROUP:
		r = walk_cgroup(t->cgroup_fd, 0, &l);
		break;
	default:
		r = process_list_read(&l.pids, &l.n);
		break;
	}
	if (r < 0) {
		free(l.pids);
		return r;
	}
	/* sorted and without the left-out ones (a process is in one cgroup, but may move) */
	if (l.n > 0)
		qsort(l.pids, l.n, sizeof(pid_t), pid_compare);
	for (size_t i = 0; i < l.n; i++)
		if ((n == 0 || l.pids[n - 1] != l.pids[i]) && !sampling_target_excludes(t, l.pids[i]))
			l.pids[n++] = l.pids[i];
	*ret = l.pids;
	*ret_n = n;
	return 0;
}

int sampling_target_has_process(const SamplingTarget *t, pid_t pid)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n;
	int r;

	if (pid <= 0)
		return 0;
	if (t->kind == SAMPLING_TARGET_PID)
		return pid == t->pid;
	if (t->kind == SAMPLING_TARGET_SYSTEM)
		return !sampling_target_excludes(t, pid);
	/* cgroup.procs through the target's own directory fd: no path, no namespace to interpret */
	r = sampling_target_list_processes(t, &pids, &n);
	if (r < 0)
		return r;
	return bsearch(&pid, pids, n, sizeof(pid_t), pid_compare) != NULL;
}
