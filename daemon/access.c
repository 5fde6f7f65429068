/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "access.h"
#include "caller-text.h"
#include "cleanup.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/*
 * Unique names are never reused on a bus, so a sender's credentials can be
 * cached: asking the bus driver is a round trip on every call otherwise.
 */
#define CREDS_CACHE_SIZE 64

static struct {
	char name[64];
	CallerCreds creds;
} creds_cache[CREDS_CACHE_SIZE];
static unsigned creds_cache_next;

static int read_group_ids(sd_bus_message *reply, CallerCreds *c)
{
	uint32_t gid;
	int r;

	r = sd_bus_message_enter_container(reply, 'v', "au");
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "u");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_read(reply, "u", &gid)) > 0)
		/* more groups than we keep: the rest count as not the caller's (refuses, never allows) */
		if (c->n_gids < CALLER_GROUPS_MAX)
			c->gids[c->n_gids++] = gid;
	if (r < 0)
		return r;
	r = sd_bus_message_exit_container(reply);
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(reply);
}

/* Ask the bus daemon 'method' (GetConnection...) about the sender of 'm'. */
static int ask_bus_about_sender(sd_bus_message *m, const char *method, sd_bus_message **ret_reply)
{
	return sd_bus_call_method(sd_bus_message_get_bus(m), "org.freedesktop.DBus",
				  "/org/freedesktop/DBus", "org.freedesktop.DBus", method, NULL,
				  ret_reply, "s", sd_bus_message_get_sender(m));
}

/*
 * dbus-daemon's GetConnectionCredentials: UnixUserID (the effective uid at
 * connect time, SO_PEERCRED) and UnixGroupIDs (its groups, primary
 * included). Never /proc/<sender pid>: that would be racy.
 */
static int query_sender_creds(sd_bus_message *m, CallerCreds *ret)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	CallerCreds c = {};
	bool have_uid = false;
	int r;

	r = ask_bus_about_sender(m, "GetConnectionCredentials", &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key;
		uint32_t uid;

		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			return r;
		if (strcmp(key, "UnixUserID") == 0) {
			r = sd_bus_message_read(reply, "v", "u", &uid);
			c.uid = uid;
			have_uid = true;
		} else if (strcmp(key, "UnixGroupIDs") == 0)
			r = read_group_ids(reply, &c);
		else
			r = sd_bus_message_skip(reply, "v");
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(reply);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (!have_uid)
		return -ENODATA;
	*ret = c;
	return 0;
}

int access_sender_creds(sd_bus_message *m, CallerCreds *ret)
{
	const char *sender = sd_bus_message_get_sender(m);
	bool cacheable = sender && strlen(sender) < sizeof(creds_cache[0].name);
	CallerCreds c;
	int r;

	if (cacheable)
		for (unsigned i = 0; i < CREDS_CACHE_SIZE; i++)
			if (strcmp(creds_cache[i].name, sender) == 0) {
				*ret = creds_cache[i].creds;
				return 0;
			}
	r = query_sender_creds(m, &c);
	if (r < 0)
		return r;
	if (cacheable) {
		unsigned slot = creds_cache_next++ % CREDS_CACHE_SIZE;

		strcpy(creds_cache[slot].name, sender);
		creds_cache[slot].creds = c;
	}
	*ret = c;
	return 0;
}

int access_sender_uid(sd_bus_message *m, uid_t *ret_uid)
{
	CallerCreds c;
	int r;

	r = access_sender_creds(m, &c);
	if (r < 0)
		return r;
	*ret_uid = c.uid;
	return 0;
}

int access_sender_pid(sd_bus_message *m, pid_t *ret_pid)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	uint32_t pid;
	int r;

	/* the bus daemon's record of who connected (SO_PEERCRED), never what the sender claims */
	r = ask_bus_about_sender(m, "GetConnectionUnixProcessID", &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_read(reply, "u", &pid);
	if (r < 0)
		return r;
	if (pid == 0 || pid > INT32_MAX)
		return -ESRCH;
	*ret_pid = (pid_t)pid;
	return 0;
}

/* One status file: /proc/<pid> or /proc/<pid>/task/<tid> in 'dir'. */
static int read_status(const char *dir, TargetInfo *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL, *path = NULL;
	TargetInfo t = {};
	size_t size = 0;
	struct stat st;
	unsigned seen = 0;

	if (asprintf(&path, "%s/status", dir) < 0)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : negative_errno();
	while (getline(&line, &size, f) >= 0) {
		unsigned a, b, c, d;
		int pid;

		/* a zombie keeps its ids, but its private files turn root's: it is gone, not changed */
		if (strncmp(line, "State:\tZ", 8) == 0 || strncmp(line, "State:\tX", 8) == 0)
			return -ESRCH;
		if (sscanf(line, "Name:\t%63[^\n]", t.comm) == 1)
			seen |= 1;
		else if (sscanf(line, "Tgid:\t%d", &pid) == 1) {
			t.pid = pid;
			seen |= 2;
		} else if (sscanf(line, "Uid:\t%u\t%u\t%u\t%u", &a, &b, &c, &d) == 4) {
			t.uids[0] = a, t.uids[1] = b, t.uids[2] = c, t.uids[3] = d;
			seen |= 4;
		} else if (sscanf(line, "Gid:\t%u\t%u\t%u\t%u", &a, &b, &c, &d) == 4) {
			t.gids[0] = a, t.gids[1] = b, t.gids[2] = c, t.gids[3] = d;
			seen |= 8;
		} else if (sscanf(line, "Threads:\t%u", &t.threads) == 1)
			seen |= 16;
		else if (sscanf(line, "CapPrm:\t%" SCNx64, &t.cap_permitted) == 1)
			seen |= 32;
	}
	if (seen != 63)
		return -ESRCH; /* a zombie, or it exited while we read */
	caller_text_sanitize(t.comm);

	/*
	 * The kernel hands the private files of a task to root when it is not
	 * dumpable (task_dump_owner(); the directory itself keeps the euid),
	 * so the owner of "environ" tells what PR_GET_DUMPABLE would.
	 */
	free(path);
	if (asprintf(&path, "%s/environ", dir) < 0)
		return -ENOMEM;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	t.dumpable = st.st_uid == t.uids[1];

	*ret = t;
	return 0;
}

int target_info_read(pid_t pid, TargetInfo *ret)
{
	char dir[32];

	if (pid <= 0)
		return -ESRCH;
	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	return read_status(dir, ret);
}

static bool caller_in_group(const CallerCreds *caller, gid_t gid)
{
	for (unsigned i = 0; i < caller->n_gids; i++)
		if (caller->gids[i] == gid)
			return true;
	return false;
}

/* The ptrace rules for one task's credentials; NULL when they pass. */
static const char *task_problem(const CallerCreds *caller, const TargetInfo *t)
{
	for (unsigned i = 0; i < 4; i++)
		if (t->uids[i] != caller->uid)
			return "it runs as another user (real, effective, saved or filesystem uid)";
	for (unsigned i = 0; i < 4; i++)
		if (!caller_in_group(caller, t->gids[i]))
			return "it runs with a group the caller is not in";
	if (t->cap_permitted != 0)
		return "it has permitted capabilities";
	if (!t->dumpable)
		return "it is not dumpable";
	return NULL;
}

int access_check_target(const CallerCreds *caller, const TargetInfo *target, const char **ret_why)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	char dir[64];

	if (caller->uid == 0)
		return 0;
	*ret_why = task_problem(caller, target);
	if (*ret_why)
		return -EPERM;
	/* credentials are per thread: every thread must pass, as ptrace checks each */
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)target->pid);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? -ESRCH : negative_errno();
	while ((de = readdir(d))) {
		char task[sizeof(dir) + 256];
		TargetInfo t;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(task, sizeof(task), "%s/%s", dir, de->d_name);
		if (read_status(task, &t) < 0)
			continue; /* exited meanwhile */
		*ret_why = task_problem(caller, &t);
		if (*ret_why)
			return -EPERM;
	}
	return 0;
}

/* Whether process 'pid' is exiting (PF_EXITING in /proc/PID/stat), or gone. */
static bool task_exiting(pid_t pid)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[32], buf[512];
	unsigned long flags;
	const char *p;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	/* after the name: state ppid pgrp session tty_nr tpgid flags */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return true;
	return flags & 0x4; /* PF_EXITING */
}

int access_check_cgroup(const CallerCreds *caller, const char *path, int dir_fd,
			const char **ret_why)
{
	char prefix[96];
	struct stat st;
	size_t n;

	if (caller->uid == 0)
		return 0;
	n = (size_t)snprintf(prefix, sizeof(prefix), "/user.slice/user-%u.slice/user@%u.service",
			     (unsigned)caller->uid, (unsigned)caller->uid);
	if (strncmp(path, prefix, n) != 0 || (path[n] != '\0' && path[n] != '/')) {
		*ret_why = "it is not within the caller's own user@UID.service";
		return -EPERM;
	}
	/* the path says it is the caller's; the directory must say so too */
	if (fstat(dir_fd, &st) < 0 || st.st_uid != caller->uid) {
		*ret_why = "its directory is not the caller's (not delegated to it)";
		return -EPERM;
	}
	return 0;
}

bool access_admit_process(void *userdata, uint32_t pid)
{
	const CallerCreds *caller = userdata;
	const char *why;
	TargetInfo t;

	if (pid == 0 || pid > INT32_MAX || target_info_read((pid_t)pid, &t) < 0)
		return false;
	return access_check_target(caller, &t, &why) == 0;
}

int access_recheck_target(const CallerCreds *caller, pid_t pid)
{
	TargetInfo t;
	int r;

	if (caller->uid == 0)
		return 0;
	r = target_info_read(pid, &t);
	if (r < 0)
		return r;
	if (!task_problem(caller, &t))
		return 0;
	/* a dying process's private files turn root's as its memory goes: it exited, nothing changed */
	return task_exiting(pid) ? -ESRCH : -EPERM;
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

/*
 * A pidfd polls readable once its process has exited (and hangs up once it is
 * reaped, on newer kernels). Signal 0 would need CAP_KILL for other users'
 * processes, which the unit does not grant; waitid(P_PIDFD) works only for
 * children.
 */
int pidfd_check_alive(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int r;

	r = poll(&p, 1, 0);
	if (r < 0)
		return negative_errno();
	if (p.revents & POLLNVAL)
		return -EBADF;
	return p.revents & (POLLIN | POLLHUP) ? -ESRCH : 0;
}
