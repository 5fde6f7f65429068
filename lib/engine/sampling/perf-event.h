/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Choosing and opening the perf events of a session: one sampling event per
 * thread and CPU, in frequency mode, timestamped with CLOCK_MONOTONIC,
 * following the threads that thread creates (inherit, limited to
 * CLONE_THREAD children). The kernel refuses mmap on inherited events that
 * are not bound to a CPU, hence per CPU, as perf record does; all events of
 * a CPU then share one ring (PERF_EVENT_IOC_SET_OUTPUT).
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct PerfEventConfig {
	const char *event;     /* "cpu-clock" (NULL), "task-clock", "cycles" */
	uint32_t hz;
	bool dwarf;            /* user regs + stack copy; otherwise the full callchain */
	uint32_t stack_bytes;  /* with dwarf */
	bool exclude_kernel;   /* no kernel callchain */
	uint32_t wakeup_bytes; /* wake the reader once this much is pending */
} PerfEventConfig;

/*
 * Ask for the records that follow a target besides its samples: mappings,
 * names, forks and exits, all timestamped with CLOCK_MONOTONIC.
 */
void perf_event_attr_track(struct perf_event_attr *attr);

/* -EINVAL for an unknown event name. */
int perf_event_attr_build(const PerfEventConfig *config, struct perf_event_attr *ret);

/* The static name of 'event' for the metrics ("cpu-clock" for NULL or an unknown name). */
const char *perf_event_name(const char *event);

/* Upper bound of one SAMPLE record's size with this configuration. */
size_t perf_event_max_sample_size(const PerfEventConfig *config);

/* The online CPUs, from /sys/devices/system/cpu/online. */
int perf_online_cpus(int **ret, size_t *ret_n);
/* Only how many there are. */
int perf_online_cpu_count(size_t *ret);

/*
 * Open 'attr' for thread 'tid' on 'cpu'. -ESRCH when the thread is gone,
 * -EOPNOTSUPP when this machine cannot count the event (a VM without a PMU
 * asked for cycles).
 */
int perf_event_open_tid(struct perf_event_attr *attr, pid_t tid, int cpu, int *ret_fd);

/*
 * Open 'attr' for every task on 'cpu' (cgroup_fd < 0), or for the tasks of
 * the cgroup2 directory 'cgroup_fd' and below it there (PERF_FLAG_PID_CGROUP):
 * the events of a multi-process target. 'attr' must not inherit.
 */
int perf_event_open_cpu(struct perf_event_attr *attr, int cgroup_fd, int cpu, int *ret_fd);
