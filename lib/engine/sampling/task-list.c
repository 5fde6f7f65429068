/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "task-list.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

static int pid_compare(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int task_list_read(pid_t pid, pid_t **ret, size_t *ret_n)
{
	_cleanup_(closedirp) DIR *d = NULL;
	_cleanup_free_ pid_t *tids = NULL;
	size_t n = 0, allocated = 0;
	struct dirent *de;
	char fn[64];

	if (pid <= 0)
		return -ESRCH;
	snprintf(fn, sizeof(fn), "/proc/%d/task", (int)pid);
	d = opendir(fn);
	if (!d)
		return errno == ENOENT ? -ESRCH : negative_errno();

	while ((errno = 0, de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (de->d_name[0] == '.' || *end != '\0' || tid <= 0)
			continue;
		if (n >= allocated) {
			size_t want = allocated ? allocated * 2 : 16;
			pid_t *t = reallocarray(tids, want, sizeof(pid_t));

			if (!t)
				return -ENOMEM;
			tids = t;
			allocated = want;
		}
		tids[n++] = (pid_t)tid;
	}
	if (errno != 0)
		return negative_errno();
	/* a zombie's task directory is empty */
	if (n == 0)
		return -ESRCH;
	qsort(tids, n, sizeof(pid_t), pid_compare);
	*ret = TAKE_PTR(tids);
	*ret_n = n;
	return 0;
}

int task_get_tgid(pid_t tid, pid_t *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	char fn[64];
	int tgid;

	if (tid <= 0)
		return -ESRCH;
	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)tid);
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : negative_errno();
	while (getline(&line, &size, f) > 0)
		if (sscanf(line, "Tgid: %d", &tgid) == 1) {
			if (tgid <= 0)
				return -ESRCH; /* an exited task reports 0 */
			*ret = (pid_t)tgid;
			return 0;
		}
	return -EBADMSG;
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
