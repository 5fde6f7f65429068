/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Resource snapshots of any process from /proc, and the record's arithmetic
 * over them (docs/record-format.md, "Arithmetic": 128-bit products, saturating
 * at 2^64-1).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "record.h"

static int read_whole(int fd, char *buf, size_t size);

/* Read a small /proc file whole; -ESRCH when the process is gone. */
static int read_proc_file(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	_cleanup_close_ int fd = -1;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	return read_whole(fd, buf, size);
}

/* Read what fd holds (a small kernel file), NUL-terminated. */
static int read_whole(int fd, char *buf, size_t size)
{
	size_t len = 0;

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

/* Whether status says "State:\tZ (zombie)" (or X) with at most one thread counted. */
static bool status_exited(const char *status, OptU64 threads)
{
	for (const char *line = status; line; line = next_line(line))
		if (strncmp(line, "State:", 6) == 0) {
			const char *s = line + 6 + strspn(line + 6, " \t");

			return (*s == 'Z' || *s == 'X') && (!threads.set || threads.value <= 1);
		}
	return false;
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
		/* a line that does not parse does not end the search: a later one may */
		if (parse_u64_word(s, &v) && (scale == 0 || v <= UINT64_MAX / scale))
			return OPT_U64(v * scale);
	}
	return (OptU64) {};
}

/* What /proc/<pid>/stat says (fields counted after the last ')': the comm may hold any byte). */
typedef struct ProcStat {
	char state;           /* field 3 */
	OptU64 cpu_time_ms;   /* utime + stime, fields 14 and 15 */
	OptU64 num_threads;   /* field 20 */
} ProcStat;

static ProcStat stat_parse(const char *stat)
{
	const char *s = strrchr(stat, ')');
	ProcStat ps = {};
	uint64_t v[18];
	bool ok[18] = {};
	long ticks_per_second;

	if (!s || s[1] != ' ')
		return ps;
	s += 2;
	ps.state = *s;
	/* v[i] is field i + 3 */
	for (int i = 0; i < 18 && *s; i++) {
		s += strspn(s, " \t\n");
		ok[i] = parse_u64_word(s, &v[i]);
		s += strcspn(s, " \t\n");
	}
	ticks_per_second = sysconf(_SC_CLK_TCK);
	if (ok[11] && ok[12] && ticks_per_second > 0) {
		unsigned __int128 ms = ((unsigned __int128) v[11] + v[12]) * 1000 /
				       (unsigned __int128) ticks_per_second;

		if (ms <= UINT64_MAX)
			ps.cpu_time_ms = OPT_U64((uint64_t) ms);
	}
	if (ok[17])
		ps.num_threads = OPT_U64(v[17]);
	return ps;
}

/*
 * A process that has exited but is not reaped yet is a zombie ('Z', or 'X'
 * while it goes): its /proc entries describe no running program (no memory,
 * one thread), so they are no observation. A live process whose main thread
 * exited shows 'Z' too, but with its other threads still counted.
 */
static bool stat_exited(const ProcStat *ps)
{
	return (ps->state == 'Z' || ps->state == 'X') &&
	       (!ps->num_threads.set || ps->num_threads.value <= 1);
}

int resource_snapshot_read(pid_t pid, ResourceSnapshot *ret)
{
	char stat[1024], status[4096];
	int r_stat, r_status;

	ProcStat ps = {};
	ResourceSnapshot s = {};

	r_stat = read_proc_file(pid, "stat", stat, sizeof(stat));
	r_status = read_proc_file(pid, "status", status, sizeof(status));
	if (r_stat < 0 && r_status < 0)
		return r_stat;

	if (r_stat >= 0) {
		ps = stat_parse(stat);
		s.cpu_time_ms = ps.cpu_time_ms;
	}
	if (r_status >= 0) {
		s.resident_bytes = status_value(status, "VmRSS:", 1024);
		s.virtual_bytes = status_value(status, "VmSize:", 1024);
		s.thread_count = status_value(status, "Threads:", 1);
	}
	/* status is read after stat: the process may have exited in between */
	if (stat_exited(&ps) || (r_status >= 0 && status_exited(status, s.thread_count)))
		return -ESRCH;
	*ret = s;
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

/* "key value" lines (cgroup's cpu.stat): the value of 'key'. */
static OptU64 keyed_value(const char *text, const char *key, uint64_t divisor)
{
	size_t len = strlen(key);
	uint64_t v;

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (strncmp(line, key, len) == 0 && line[len] == ' ' && parse_u64_word(line + len + 1, &v))
			return OPT_U64(v / divisor);
	return (OptU64) {};
}

static int read_cgroup_file(int dir_fd, const char *name, char *buf, size_t size)
{
	_cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return negative_errno();
	return read_whole(fd, buf, size);
}

int resource_snapshot_read_cgroup(int dir_fd, ResourceSnapshot *ret)
{
	char stat[4096], memory[64];
	ResourceSnapshot s = {};
	uint64_t v;
	int r;

	r = read_cgroup_file(dir_fd, "cpu.stat", stat, sizeof(stat));
	if (r == -ENOENT || r == -ENODEV)
		return -ESRCH; /* removed */
	if (r >= 0)
		s.cpu_time_ms = keyed_value(stat, "usage_usec", 1000);
	/* no memory controller here (or at the root): unknown, not zero */
	if (read_cgroup_file(dir_fd, "memory.current", memory, sizeof(memory)) >= 0 &&
	    parse_u64_word(memory, &v))
		s.resident_bytes = OPT_U64(v);
	*ret = s;
	return 0;
}
