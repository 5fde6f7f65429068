/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Resource snapshots of any process from /proc, and the seed's arithmetic over
 * them (u128 where it widens, saturating to u64::MAX as it does).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "record.h"

/* Read a small /proc file whole; -ESRCH when the process is gone. */
static int read_proc_file(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	size_t len = 0;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* a process that exits between open and read */
			return errno == ESRCH ? -ESRCH : negative_errno();
		}
		if (n == 0)
			break;
		len += (size_t) n;
	}
	buf[len] = '\0';
	return 0;
}

static bool parse_u64_word(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || (*end != '\0' && *end != ' ' && *end != '\t' && *end != '\n'))
		return false;
	*ret = v;
	return true;
}

static const char *next_line(const char *line)
{
	const char *eol = strchr(line, '\n');

	return eol ? eol + 1 : NULL;
}

/* The first line starting with field whose next word times scale is a u64, or null. */
static OptU64 status_value(const char *status, const char *field, uint64_t scale)
{
	size_t n = strlen(field);

	for (const char *line = status; line; line = next_line(line)) {
		const char *s = line + n;
		uint64_t v;

		if (strncmp(line, field, n) != 0)
			continue;
		s += strspn(s, " \t");
		/* like the seed's find_map: a line that does not parse does not end the search */
		if (parse_u64_word(s, &v) && (scale == 0 || v <= UINT64_MAX / scale))
			return OPT_U64(v * scale);
	}
	return (OptU64) {};
}

/* utime + stime (fields 14 and 15, counted after the last ')') in ms. */
static OptU64 stat_cpu_time_ms(const char *stat)
{
	const char *s = strrchr(stat, ')');
	uint64_t ticks[2];
	long ticks_per_second;
	unsigned __int128 ms;

	if (!s || s[1] == '\0')
		return (OptU64) {};
	s += 2;
	for (int field = 0; field < 13; field++) {
		s += strspn(s, " \t\n");
		if (field >= 11 && !parse_u64_word(s, &ticks[field - 11]))
			return (OptU64) {};
		s += strcspn(s, " \t\n");
	}
	ticks_per_second = sysconf(_SC_CLK_TCK);
	if (ticks_per_second <= 0)
		return (OptU64) {};
	ms = ((unsigned __int128) ticks[0] + ticks[1]) * 1000 / (unsigned __int128) ticks_per_second;
	if (ms > UINT64_MAX)
		return (OptU64) {};
	return OPT_U64((uint64_t) ms);
}

int resource_snapshot_read(pid_t pid, ResourceSnapshot *ret)
{
	char stat[1024], status[4096];
	int r_stat, r_status;

	r_stat = read_proc_file(pid, "stat", stat, sizeof(stat));
	r_status = read_proc_file(pid, "status", status, sizeof(status));
	if (r_stat < 0 && r_status < 0)
		return r_stat;

	*ret = (ResourceSnapshot) {
		.cpu_time_ms = r_stat >= 0 ? stat_cpu_time_ms(stat) : (OptU64) {},
	};
	if (r_status >= 0) {
		ret->resident_bytes = status_value(status, "VmRSS:", 1024);
		ret->virtual_bytes = status_value(status, "VmSize:", 1024);
		ret->thread_count = status_value(status, "Threads:", 1);
	}
	return 0;
}

OptU64 resource_cpu_milli_percent(OptU64 start_cpu_ms, OptU64 finish_cpu_ms, uint64_t elapsed_ns)
{
	unsigned __int128 v;

	if (elapsed_ns == 0 || !start_cpu_ms.set || !finish_cpu_ms.set ||
	    finish_cpu_ms.value < start_cpu_ms.value)
		return (OptU64) {};
	v = (unsigned __int128) (finish_cpu_ms.value - start_cpu_ms.value) * 100000000000u /
	    elapsed_ns;
	return OPT_U64(v > UINT64_MAX ? UINT64_MAX : (uint64_t) v);
}

OptF64 resource_cpu_percent(OptU64 start_cpu_ms, OptU64 finish_cpu_ms, uint64_t elapsed_ns)
{
	double wall_ms;

	if (!start_cpu_ms.set || !finish_cpu_ms.set || finish_cpu_ms.value < start_cpu_ms.value)
		return (OptF64) {};
	wall_ms = (double) elapsed_ns / 1000000.0;
	if (!(wall_ms > 0.0))
		return (OptF64) {};
	return OPT_F64((double) (finish_cpu_ms.value - start_cpu_ms.value) * 100.0 / wall_ms);
}
