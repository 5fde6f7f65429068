/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "access.h"
#include "cleanup.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/*
 * Unique names are never reused on a bus, so a sender's uid can be cached:
 * asking the bus driver is a round trip on every call otherwise.
 */
#define UID_CACHE_SIZE 64

static struct {
	char name[64];
	uid_t uid;
} uid_cache[UID_CACHE_SIZE];
static unsigned uid_cache_next;

static int query_sender_uid(sd_bus_message *m, uid_t *ret_uid)
{
	_cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
	uid_t uid;
	int r;

	/*
	 * No SD_BUS_CREDS_AUGMENT: reading /proc/<sender pid> later would be
	 * racy. dbus-daemon reports the uid it saw at connect time (SO_PEERCRED,
	 * an effective uid) as UnixUserID, which sd-bus files under UID.
	 */
	r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID, &creds);
	if (r < 0)
		return r;
	r = sd_bus_creds_get_euid(creds, &uid);
	if (r < 0)
		r = sd_bus_creds_get_uid(creds, &uid);
	if (r < 0)
		return r;
	*ret_uid = uid;
	return 0;
}

int access_sender_uid(sd_bus_message *m, uid_t *ret_uid)
{
	const char *sender = sd_bus_message_get_sender(m);
	unsigned slot;
	uid_t uid;
	int r;

	if (sender && strlen(sender) < sizeof(uid_cache[0].name))
		for (unsigned i = 0; i < UID_CACHE_SIZE; i++)
			if (strcmp(uid_cache[i].name, sender) == 0) {
				*ret_uid = uid_cache[i].uid;
				return 0;
			}
	r = query_sender_uid(m, &uid);
	if (r < 0)
		return r;
	if (sender && strlen(sender) < sizeof(uid_cache[0].name)) {
		slot = uid_cache_next++ % UID_CACHE_SIZE;
		strcpy(uid_cache[slot].name, sender);
		uid_cache[slot].uid = uid;
	}
	*ret_uid = uid;
	return 0;
}

int target_info_read(pid_t pid, TargetInfo *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	TargetInfo t = {};
	char path[64];
	size_t size = 0;
	struct stat st;
	bool have_uid = false;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : negative_errno();
	while (getline(&line, &size, f) >= 0) {
		unsigned ruid, euid;

		if (sscanf(line, "Name:\t%63[^\n]", t.comm) == 1)
			continue;
		if (sscanf(line, "Uid:\t%u\t%u", &ruid, &euid) == 2) {
			t.ruid = ruid;
			t.euid = euid;
			have_uid = true;
		}
	}
	if (!have_uid)
		return -ESRCH; /* a zombie, or it exited while we read */

	/*
	 * The kernel hands the private files of /proc/<pid> to root when the
	 * process is not dumpable (task_dump_owner(); /proc/<pid> itself keeps
	 * the euid), so the owner of "environ" tells what PR_GET_DUMPABLE would.
	 */
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	t.dumpable = st.st_uid == t.euid;

	*ret = t;
	return 0;
}

int access_check_target(uid_t caller, const TargetInfo *target)
{
	if (caller == 0)
		return 0;
	if (target->ruid != caller || target->euid != caller || !target->dumpable)
		return -EPERM;
	return 0;
}

int access_check_owner(uid_t caller, uid_t owner)
{
	return caller == 0 || caller == owner ? 0 : -EPERM;
}

int pidfd_open_pid(pid_t pid)
{
	int fd;

	if (pid <= 0)
		return -ESRCH;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return errno == EINVAL ? -ESRCH : negative_errno();
	return fd;
}

int pidfd_check_alive(int pidfd)
{
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return negative_errno();
	return 0;
}
