/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The processes of a multi-process target (a cgroup, the whole machine) and
 * each one's own address spaces, kept current from the records the kernel
 * writes: MMAP2 adds code, COMM with exec starts a new, empty address space,
 * FORK copies the parent's, EXIT marks the process gone (it stays, so its
 * samples can still be named). A process joins from /proc when it is first
 * met, so processes that were running before the session, or that moved into
 * a cgroup, are covered too.
 *
 * Address spaces are numbered in exec order from the session's start; the
 * bpf backend keys its counts by the same number (see bpf/profile.bpf.c).
 * A space lives as long as the table.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "perf-record.h"
#include "process-maps.h"

typedef struct ThreadName {
	uint32_t tid;
	char comm[16];
} ThreadName;

typedef struct TargetProcess {
	uint32_t pid;
	char comm[16];        /* the process's name (its main thread's comm) */
	ThreadName *threads;  /* names COMM records gave its threads */
	size_t n_threads, threads_allocated;
	ProcessMaps **spaces; /* address spaces in exec order; the last is the current one */
	size_t n_spaces, spaces_allocated;
	bool exited;
	bool excluded;        /* refused by the admit rule: counted, never sampled or named */
} TargetProcess;

/* Whether a process may be sampled (the caller's access rule); asked on joining and on exec. */
typedef bool (*ProcessAdmitFn)(void *userdata, uint32_t pid);

typedef struct ProcessTable ProcessTable;

int process_table_new(ProcessTable **ret);
ProcessTable *process_table_free(ProcessTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProcessTable *, process_table_free);
void process_table_set_admit(ProcessTable *t, ProcessAdmitFn fn, void *userdata);

/* The process, or NULL when the table has not met it. */
TargetProcess *process_table_find(const ProcessTable *t, uint32_t pid);
/*
 * The process, joining it from /proc (its maps and comm) when new. A process
 * already gone joins empty: records may still describe it. Never fails with -ESRCH.
 */
int process_table_get(ProcessTable *t, uint32_t pid, TargetProcess **ret);

/*
 * Apply a MMAP2, COMM, FORK or EXIT record (anything else is ignored).
 * Processes the table has not met join first; the caller filters out
 * records of processes that are not part of the target.
 */
int process_table_apply(ProcessTable *t, const PerfRecord *rec);

/* A thread's name as the records told it, or NULL. */
const char *target_process_thread_name(const TargetProcess *p, uint32_t tid);

/* The mapping an MMAP2 record reports; its path points into the record (NULL when empty). */
ProcessMapping process_mapping_from_mmap2(const PerfRecordMmap2 *m);
/* Add the mapping an MMAP2 record reports (nothing for an empty or wrapping one). */
int process_maps_apply_mmap2(ProcessMaps *maps, const PerfRecordMmap2 *m);

/*
 * The file mapping at 'address' of process 'pid' in any of its address spaces,
 * the latest first (the address alone does not say which image was meant).
 */
const ProcessMapping *process_table_find_mapping(const ProcessTable *t, uint32_t pid,
						 uint64_t address);

/*
 * A mapping of the file (device, inode) by any process the table admitted,
 * with that process in *ret_pid; NULL when none mapped it.
 */
const ProcessMapping *process_table_find_file(const ProcessTable *t, uint32_t dev_major,
					      uint32_t dev_minor, uint64_t inode, uint32_t *ret_pid);

/* The address space of a process after 'exec_gen' execs since the session started (clamped). */
const ProcessMaps *target_process_space(const TargetProcess *p, uint32_t exec_gen);

size_t process_table_size(const ProcessTable *t);
/* The i-th process in joining order, i < process_table_size(). */
TargetProcess *process_table_at(const ProcessTable *t, size_t i);
