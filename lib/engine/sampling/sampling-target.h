/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a session samples (DESIGN.md §3, §6): one process, every process of a
 * cgroup v2 subtree (a systemd unit is resolved to its cgroup by the caller),
 * or the whole machine but a few processes (profd and its helpers).
 *
 * A cgroup is named by its path relative to the cgroup2 mount — as systemd's
 * ControlGroup property spells it, "/system.slice/foo.service" — or by its
 * absolute path under the mount (/sys/fs/cgroup/unified/... on hybrid
 * systems). The directory is opened beneath the mount without following
 * symlinks, so a name can never reach anything but a cgroup2 directory.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cleanup.h"

typedef enum SamplingTargetKind {
	SAMPLING_TARGET_PID,
	SAMPLING_TARGET_CGROUP,
	SAMPLING_TARGET_SYSTEM,
} SamplingTargetKind;

typedef struct SamplingTarget {
	SamplingTargetKind kind;
	pid_t pid;         /* PID: the process (a thread id stands for its process) */
	char *cgroup;      /* CGROUP: path relative to the cgroup2 mount, "/" first */
	int cgroup_fd;     /* CGROUP: the directory, O_RDONLY (perf and bpf take this fd) */
	uint64_t cgroup_id; /* CGROUP: the kernel's id of the cgroup (its inode number) */
	pid_t *excluded;   /* SYSTEM: processes left out besides the caller itself */
	size_t n_excluded;
	char *unit;        /* CGROUP: the systemd unit it is the control group of, or NULL */
} SamplingTarget;

int sampling_target_new_pid(pid_t pid, SamplingTarget **ret);
/* -EINVAL for a malformed path, -ENOENT when no such cgroup, -ENOTDIR/-EMEDIUMTYPE not a cgroup2 dir. */
int sampling_target_new_cgroup(const char *path, SamplingTarget **ret);
int sampling_target_new_system(const pid_t *excluded, size_t n_excluded, SamplingTarget **ret);
SamplingTarget *sampling_target_free(SamplingTarget *t);
/* A cgroup target is a systemd unit's: described and recorded as the unit. */
int sampling_target_set_unit(SamplingTarget *t, const char *unit);
DEFINE_TRIVIAL_CLEANUP_FUNC(SamplingTarget *, sampling_target_free);

/* "pid:N", "cgroup:PATH", "unit:NAME" or "system"; free() the result. */
int sampling_target_describe(const SamplingTarget *t, char **ret);
/* "pid", "cgroup", "system" */
const char *sampling_target_kind_to_string(SamplingTargetKind kind);
bool sampling_target_is_multi_process(const SamplingTarget *t);

/* Is 'pid' left out of a SYSTEM target (the caller's own process is, always)? */
bool sampling_target_excludes(const SamplingTarget *t, pid_t pid);

/* Does the target hold process 'pid' now (a cgroup's: in its subtree)? 1 yes, 0 no, or -errno. */
int sampling_target_has_process(const SamplingTarget *t, pid_t pid);
/* The processes the target holds now, sorted; an empty cgroup gives none. */
int sampling_target_list_processes(const SamplingTarget *t, pid_t **ret, size_t *ret_n);

/* Where cgroup2 is mounted (from /proc/self/mountinfo); free() the result. */
int cgroup2_mount_point(char **ret);
/* A cgroup name as sampling_target_new_cgroup() takes it, made relative to 'mount', "/" first. */
int cgroup_path_normalize(const char *mount, const char *path, char **ret);
