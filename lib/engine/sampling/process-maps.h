/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The address space of a target process: loaded from /proc/<pid>/maps at
 * session start and kept current from MMAP2 records, so code loaded
 * mid-session can be named. 'generation' changes whenever the mappings do and
 * is never shared by two ProcessMaps of one program; unwinders compare it to
 * know when to refresh their module lists.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cleanup.h"

typedef struct ProcessMapping {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;      /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t prot;       /* PROT_READ/WRITE/EXEC */
	char *path;          /* file path, "[vdso]" style pseudo names, or NULL when anonymous */
} ProcessMapping;

/* The kernel's vDSO, by the name /proc/PID/maps and the unwinder's modules give it. */
static inline bool mapping_path_is_vdso(const char *path)
{
	return path && strcmp(path, "[vdso]") == 0;
}

typedef struct ProcessMaps {
	uint32_t pid;
	ProcessMapping *mappings; /* sorted by start, non-overlapping */
	size_t n_mappings;
	uint64_t generation;

	size_t n_allocated; /* private: capacity of mappings */
} ProcessMaps;

int process_maps_load(uint32_t pid, ProcessMaps **ret);
/* An empty address space (for tests and synthetic targets). */
int process_maps_new(uint32_t pid, ProcessMaps **ret);
/* A copy of 'from' for process 'pid' (a forked child starts with its parent's mappings). */
int process_maps_clone(const ProcessMaps *from, uint32_t pid, ProcessMaps **ret);
ProcessMaps *process_maps_free(ProcessMaps *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProcessMaps *, process_maps_free);
/* Forget every mapping (the target called exec); bumps the generation. */
void process_maps_reset(ProcessMaps *m);
/* Insert a mapping, replacing whatever overlapped it (as mmap does). */
int process_maps_add(ProcessMaps *m, const ProcessMapping *mapping);
const ProcessMapping *process_maps_find(const ProcessMaps *m, uint64_t addr);
