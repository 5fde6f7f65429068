/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "task-list.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "parse-number.h"

static int pid_compare(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The numeric entries of a /proc directory, sorted; -ENOENT when it does not exist. */
static int read_numeric_dir(const char *path, pid_t **ret, size_t *ret_n)
{
	_cleanup_(closedirp) DIR *d = NULL;
	_cleanup_free_ pid_t *ids = NULL;
	size_t n = 0, allocated = 0;
	struct dirent *de;

	d = opendir(path);
	if (!d)
		return negative_errno();

	while ((errno = 0, de = readdir(d))) {
		uint64_t id;

		if (parse_u64(de->d_name, &id) < 0 || id == 0 || id > INT32_MAX)
			continue;
		if (ARRAY_RESERVE(ids, allocated, n + 1, 16) < 0)
			return -ENOMEM;
		ids[n++] = (pid_t)id;
	}
	if (errno != 0)
		return negative_errno();
	qsort(ids, n, sizeof(pid_t), pid_compare);
	*ret = TAKE_PTR(ids);
	*ret_n = n;
	return 0;
}

int task_list_read(pid_t pid, pid_t **ret, size_t *ret_n)
{
	_cleanup_free_ pid_t *tids = NULL;
	char fn[64];
	size_t n;
	int r;

	if (pid <= 0)
		return -ESRCH;
	snprintf(fn, sizeof(fn), "/proc/%d/task", (int)pid);
	r = read_numeric_dir(fn, &tids, &n);
	if (r == -ENOENT)
		return -ESRCH;
	if (r < 0)
		return r;
	/* a zombie's task directory is empty */
	if (n == 0)
		return -ESRCH;
	*ret = TAKE_PTR(tids);
	*ret_n = n;
	return 0;
}

int process_list_read(pid_t **ret, size_t *ret_n)
{
	return read_numeric_dir("/proc", ret, ret_n);
}

/* A pid-valued field of /proc/<tid>/status ("Tgid", "PPid"); -ESRCH when the task is gone. */
static int status_pid_field(pid_t tid, const char *key, bool positive, pid_t *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t size = 0, len = strlen(key);
	char fn[64];
	int v;

	if (tid <= 0)
		return -ESRCH;
	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)tid);
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : negative_errno();
	while (getline(&line, &size, f) > 0)
		if (strncmp(line, key, len) == 0 && line[len] == ':' &&
		    sscanf(line + len + 1, "%d", &v) == 1) {
			if (v < 0 || (positive && v == 0))
				return -ESRCH; /* an exited task reports Tgid 0 */
			*ret = (pid_t)v;
			return 0;
		}
	/* reaped between open and read: the read fails (ESRCH) or finds nothing */
	return -ESRCH;
}

int task_get_tgid(pid_t tid, pid_t *ret)
{
	return status_pid_field(tid, "Tgid", true, ret);
}

int task_get_ppid(pid_t pid, pid_t *ret)
{
	return status_pid_field(pid, "PPid", false, ret);
}

int task_read_comm(pid_t pid, pid_t tid, char ret[static 16])
{
	_cleanup_fclose_ FILE *f = NULL;
	char fn[96], buf[32];
	size_t len;

	snprintf(fn, sizeof(fn), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : negative_errno();
	if (!fgets(buf, sizeof(buf), f))
		return -EIO;
	len = strcspn(buf, "\n");
	if (len > 15)
		len = 15;
	memcpy(ret, buf, len);
	ret[len] = '\0';
	return 0;
}
