/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perf-event.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "perf-record.h"
#include "perf-sample.h"

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
};

/* kernel.perf_event_max_stack's default; the callchain also carries context markers */
#define CALLCHAIN_MAX_WORDS (1 + 127 + 8)

void perf_event_attr_track(struct perf_event_attr *attr)
{
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

const char *perf_event_name(const char *event)
{
	for (size_t i = 0; event && i < ELEMENTSOF(events); i++)
		if (strcmp(events[i].name, event) == 0)
			return events[i].name;
	return events[0].name;
}

int perf_event_attr_build(const PerfEventConfig *config, struct perf_event_attr *ret)
{
	const char *name = config->event ? config->event : "cpu-clock";
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.sample_freq = config->hz,
		.freq = 1,
		.sample_type = perf_record_sample_type(config->dwarf),
		.disabled = 1,
		/* new threads start sampling in the kernel, before we could even see them */
		.inherit = 1,
		.inherit_thread = 1,
		.exclude_callchain_kernel = config->exclude_kernel,
		/* in DWARF mode too: where the CFI walk of the stack copy stops early (code
		 * without CFI, a short copy), the frame-pointer chain may go on (hybrid) */
		.watermark = 1,
		.wakeup_watermark = config->wakeup_bytes,
	};
	size_t i;

	for (i = 0; i < ELEMENTSOF(events); i++)
		if (strcmp(events[i].name, name) == 0)
			break;
	if (i >= ELEMENTSOF(events) || config->hz == 0)
		return -EINVAL;
	attr.type = events[i].type;
	attr.config = events[i].config;
	perf_event_attr_track(&attr);
	if (config->dwarf) {
		if (config->stack_bytes == 0 || config->stack_bytes % 8 != 0)
			return -EINVAL;
		attr.sample_regs_user = PERF_SAMPLE_REGS_USER_MASK;
		attr.sample_stack_user = config->stack_bytes;
	}
	*ret = attr;
	return 0;
}

size_t perf_event_max_sample_size(const PerfEventConfig *config)
{
	size_t n = sizeof(struct perf_event_header) + 3 * sizeof(uint64_t); /* ip, pid/tid, time */

	n += CALLCHAIN_MAX_WORDS * sizeof(uint64_t);
	if (config->dwarf) {
		n += (1 + (size_t)__builtin_popcountll(PERF_SAMPLE_REGS_USER_MASK)) * sizeof(uint64_t);
		n += 2 * sizeof(uint64_t) + config->stack_bytes;
	}
	return n;
}

int perf_online_cpus(int **ret, size_t *ret_n)
{
	_cleanup_fclose_ FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	_cleanup_free_ int *cpus = NULL;
	size_t n = 0, allocated = 0;
	int a, b, r;
	char sep;

	if (!f)
		return negative_errno();
	/* "0-3,5,7-8" */
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		sep = (char)fgetc(f);
		if (sep == '-') {
			if (fscanf(f, "%d", &b) != 1)
				return -EBADMSG;
			sep = (char)fgetc(f);
		}
		if (a < 0 || b < a || b - a > 65536)
			return -EBADMSG;
		for (int c = a; c <= b; c++) {
			r = ARRAY_RESERVE(cpus, allocated, n + 1, 16);
			if (r < 0)
				return r;
			cpus[n++] = c;
		}
		if (sep != ',')
			break;
	}
	if (n == 0)
		return -EBADMSG;
	*ret = TAKE_PTR(cpus);
	*ret_n = n;
	return 0;
}

int perf_online_cpu_count(size_t *ret)
{
	_cleanup_free_ int *cpus = NULL;

	return perf_online_cpus(&cpus, ret);
}

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t tid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* What perf_event_open() gave: the fd, or why not. */
static int opened(const struct perf_event_attr *attr, int fd, int *ret_fd)
{
	if (fd < 0) {
		if (attr->type == PERF_TYPE_HARDWARE && (errno == ENOENT || errno == EOPNOTSUPP))
			return -EOPNOTSUPP;
		return negative_errno();
	}
	*ret_fd = fd;
	return 0;
}

int perf_event_open_tid(struct perf_event_attr *attr, pid_t tid, int cpu, int *ret_fd)
{
	int fd;

	fd = sys_perf_event_open(attr, tid, cpu);
	if (fd < 0 && errno == EINVAL && attr->inherit_thread) {
		/* kernels before 5.13 lack inherit_thread; child processes are then filtered by pid */
		attr->inherit_thread = 0;
		fd = sys_perf_event_open(attr, tid, cpu);
	}
	return opened(attr, fd, ret_fd);
}

int perf_event_open_cpu(struct perf_event_attr *attr, int cgroup_fd, int cpu, int *ret_fd)
{
	unsigned long flags = PERF_FLAG_FD_CLOEXEC | (cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0);
	int fd;

	fd = (int)syscall(SYS_perf_event_open, attr, cgroup_fd >= 0 ? cgroup_fd : -1, cpu, -1, flags);
	return opened(attr, fd, ret_fd);
}
