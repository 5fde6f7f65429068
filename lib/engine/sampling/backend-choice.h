/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Which backend a session runs with (DESIGN.md §3): the one asked for, or
 * what `auto` picks for the target — bpf for the whole machine when this
 * machine runs it (no per-sample work in user space, whatever the number of
 * processes), perf-dwarf for a process, a cgroup or a unit (it unwinds code
 * built without frame pointers, which the kernel's walk cannot). The reason
 * goes into the metrics.
 */

#include "sampling-target.h"

typedef struct BackendChoice {
	const char *backend; /* "perf-dwarf", "perf-fp", "bpf" */
	const char *reason;  /* static text for the metrics */
} BackendChoice;

/*
 * 'requested' NULL or "auto" lets the target decide. -EINVAL for an unknown
 * name, -EOPNOTSUPP for "bpf" on a machine (or build) without it.
 */
int sampling_backend_choose(const char *requested, SamplingTargetKind kind, BackendChoice *ret);
