/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who may profile what (DESIGN.md §8). uid 0 may profile anything. Any other
 * caller only processes that the ptrace rules would let it trace, emulated
 * (profd cannot take on the caller's credentials): the real, effective,
 * saved and filesystem uids of every thread are the caller's, the gids are
 * among the caller's groups, no capability is permitted, and the process is
 * dumpable. Targets are held by a pidfd so a recycled pid is never profiled
 * by mistake.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/* The caller's groups as the bus saw them at connect time (primary and supplementary). */
#define CALLER_GROUPS_MAX 64

typedef struct CallerCreds {
	uid_t uid;
	gid_t gids[CALLER_GROUPS_MAX];
	unsigned n_gids;
} CallerCreds;

typedef struct TargetInfo {
	pid_t pid;     /* the process (thread group) id */
	uid_t uids[4]; /* real, effective, saved, filesystem */
	gid_t gids[4];
	uint64_t cap_permitted;
	bool dumpable;
	unsigned threads;
	char comm[64]; /* control characters replaced */
} TargetInfo;

/* The effective uid of the peer that sent 'm'. */
int access_sender_uid(sd_bus_message *m, uid_t *ret_uid);
/* Its uid and groups. */
int access_sender_creds(sd_bus_message *m, CallerCreds *ret);
/*
 * The process that connected the sender to the bus (the bus daemon's record,
 * SO_PEERCRED at connect time): a live run's program. Pin it with a pidfd and
 * check it as any target: the pid may have been reused since.
 */
int access_sender_pid(sd_bus_message *m, pid_t *ret_pid);

/*
 * Read /proc/<pid>/status (and the owner of its private files); 'pid' may
 * be a thread's id, ret->pid is then its process. -ESRCH when it is gone.
 */
int target_info_read(pid_t pid, TargetInfo *ret);

/*
 * 0 when 'caller' may profile the target, -EPERM otherwise with *ret_why
 * saying why ("it runs as another user", ...). Checks what 'target' says
 * of the main thread and then every thread of the process.
 */
int access_check_target(const CallerCreds *caller, const TargetInfo *target, const char **ret_why);

/*
 * The same check again for process 'pid' while it is being sampled: 0 while
 * the caller may still profile it, -EPERM when its credentials changed,
 * -ESRCH when it is gone. Reads only the main thread (a thread cannot gain
 * credentials the others lack without exec, which replaces them all).
 * Thread-safe.
 */
int access_recheck_target(const CallerCreds *caller, pid_t pid);

/*
 * Multi-process targets. A caller other than root may profile a cgroup only
 * within its own user manager's subtree, /user.slice/user-UID.slice/user@UID.service
 * (its user units; systemd delegates that subtree to the user, who owns its
 * directories): 'path' is the cgroup relative to the cgroup2 mount, 'dir_fd'
 * its directory. 0, or -EPERM with *ret_why.
 */
int access_check_cgroup(const CallerCreds *caller, const char *path, int dir_fd,
			const char **ret_why);
/*
 * A ProcessAdmitFn (process-table.h) for the processes of a caller's cgroup:
 * 'userdata' is the CallerCreds; only processes the caller could profile by
 * pid pass (access_check_target()), the rest are left out. Thread-safe.
 */
bool access_admit_process(void *userdata, uint32_t pid);

/* 0 when 'caller' may see or change something owned by 'owner'. */
int access_check_owner(uid_t caller, uid_t owner);

/* A pidfd for 'pid' (-ESRCH when there is no such process). */
int pidfd_open_pid(pid_t pid);
/* 0 while the process behind 'pidfd' has not exited, -ESRCH after. */
int pidfd_check_alive(int pidfd);
