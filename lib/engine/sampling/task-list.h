/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The threads of a process as /proc lists them. */

#include <stddef.h>
#include <sys/types.h>

/* The tids in /proc/<pid>/task, sorted. -ESRCH when the process does not exist. */
int task_list_read(pid_t pid, pid_t **ret, size_t *ret_n);

/* Every process in /proc, sorted. */
int process_list_read(pid_t **ret, size_t *ret_n);

/* The process a thread id belongs to (Tgid in /proc/<tid>/status); -ESRCH when gone. */
int task_get_tgid(pid_t tid, pid_t *ret);
/* A process's parent (PPid in /proc/<pid>/status, 0 for none); -ESRCH when gone. */
int task_get_ppid(pid_t pid, pid_t *ret);

/* A thread's comm (at most 16 bytes with the NUL) from /proc/<pid>/task/<tid>/comm. */
int task_read_comm(pid_t pid, pid_t tid, char ret[static 16]);
