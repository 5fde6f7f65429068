/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The records that keep a process model current without sampling anything:
 * one software "dummy" perf event per CPU reporting MMAP2 (code mapped),
 * COMM (renames and execs), FORK and EXIT, for every process or for the
 * tasks of one cgroup (PERF_FLAG_PID_CGROUP). What it costs follows the
 * rate of mmaps, execs and forks, never the sampling rate — the side band of
 * a backend whose samples never reach user space one by one (bpf).
 *
 * Rings are per CPU, and a process may fork on one CPU and map code on
 * another, so each drain hands out the records of all rings merged in time
 * order.
 */

#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "perf-record.h"
#include "session-timers.h"

/* The sample_id trailer of its records (sample_id_all): pid/tid and time. */
#define SIDE_BAND_SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

typedef struct SideBand SideBand;

/* 'cgroup_fd' < 0: every process; else the tasks of that cgroup2 directory and below. */
int side_band_open(int cgroup_fd, size_t ring_bytes, SideBand **ret);
SideBand *side_band_free(SideBand *sb);
DEFINE_TRIVIAL_CLEANUP_FUNC(SideBand *, side_band_free);

/* Watch every ring (readable at half full) as 'source' of 'timers'. */
int side_band_watch(SideBand *sb, SessionTimers *timers, unsigned source);

/* Called for each record in time order, raw and parsed; both live only during the call. */
typedef int (*SideBandRecordFn)(void *userdata, const struct perf_event_header *raw,
				const PerfRecord *rec);
/* Hand over what every ring holds now; returns 0 or the first negative errno 'fn' returned. */
int side_band_drain(SideBand *sb, SideBandRecordFn fn, void *userdata);

/* Records the kernel could not write (rings full): the model may miss mappings. */
uint64_t side_band_lost(const SideBand *sb);
/* Bytes of records read. */
uint64_t side_band_bytes(const SideBand *sb);
