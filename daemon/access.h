/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who may profile what (DESIGN.md §6): uid 0 anything; any other uid only
 * dumpable processes whose real and effective uid are its own. Targets are
 * held by a pidfd so a recycled pid is never profiled by mistake.
 */

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

typedef struct TargetInfo {
	uid_t ruid, euid;
	bool dumpable;
	char comm[64];
} TargetInfo;

/* The effective uid of the peer that sent 'm'. */
int access_sender_uid(sd_bus_message *m, uid_t *ret_uid);

/* Read /proc/<pid>/status (and the owner of /proc/<pid>); -ESRCH when the process is gone. */
int target_info_read(pid_t pid, TargetInfo *ret);

/* 0 when 'caller' may profile the target, -EPERM otherwise. */
int access_check_target(uid_t caller, const TargetInfo *target);

/* 0 when 'caller' may see or change something owned by 'owner'. */
int access_check_owner(uid_t caller, uid_t owner);

/* A pidfd for 'pid' (-ESRCH when there is no such process). */
int pidfd_open_pid(pid_t pid);
/* 0 while the process behind 'pidfd' has not exited, -ESRCH after. */
int pidfd_check_alive(int pidfd);
