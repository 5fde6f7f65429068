/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perf-map.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "sorted.h"
#include "time-util.h"

/* A map that does not exist yet is asked for again at most this often. */
#define REOPEN_INTERVAL_NS 250000000ULL
/* Longer lines are skipped (V8's longest names are a few hundred bytes). */
#define LINE_MAX_BYTES 4096
#define READ_CHUNK 65536

typedef struct PerfMapSymbol {
	uint64_t start, size;
	uint64_t seq; /* order in the file: a later line for the same start wins */
	char *name;
} PerfMapSymbol;

struct PerfMap {
	const TargetFileOpener *files;
	uint32_t pid;
	char *name;    /* what the target calls it */
	int fd;        /* -1 until the file exists */
	uint64_t next_open_ns;
	uint64_t parsed; /* bytes of the file taken, up to the last complete line */
	PerfMapSymbol *symbols; /* sorted by (start, seq) */
	size_t n_symbols, n_allocated;
	uint64_t next_seq;
};

static void symbols_clear(PerfMap *m)
{
	for (size_t i = 0; i < m->n_symbols; i++)
		free(m->symbols[i].name);
	m->n_symbols = 0;
}

PerfMap *perf_map_free(PerfMap *m)
{
	if (!m)
		return NULL;
	symbols_clear(m);
	free(m->symbols);
	safe_close(m->fd);
	free(m->name);
	free(m);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(PerfMap *, perf_map_free);

int perf_map_new(const TargetFileOpener *files, uint32_t pid, uint32_t ns_pid, PerfMap **ret)
{
	_cleanup_(perf_map_freep) PerfMap *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->fd = -1;
	m->files = files ?: &target_file_opener_default;
	m->pid = pid;
	if (asprintf(&m->name, "/tmp/perf-%" PRIu32 ".map", ns_pid ?: pid) < 0) {
		m->name = NULL;
		return -ENOMEM;
	}
	*ret = TAKE_PTR(m);
	return 0;
}

const char *perf_map_name(const PerfMap *m)
{
	return m->name;
}

bool perf_map_exists(const PerfMap *m)
{
	return m->fd >= 0;
}

static int symbol_compare(const void *a, const void *b)
{
	const PerfMapSymbol *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One "START SIZE name" line (without its newline); others are skipped. */
static int add_line(PerfMap *m, const char *line, size_t len)
{
	char buf[LINE_MAX_BYTES + 1];
	unsigned long long start, size;
	int name_off = 0;
	PerfMapSymbol *s;

	if (len > LINE_MAX_BYTES)
		return 0;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "%llx %llx %n", &start, &size, &name_off) < 2 || name_off == 0 ||
	    buf[name_off] == '\0' || size == 0)
		return 0;
	if (ARRAY_RESERVE(m->symbols, m->n_allocated, m->n_symbols + 1, 64) < 0)
		return -ENOMEM;
	s = &m->symbols[m->n_symbols];
	s->name = strdup(buf + name_off);
	if (!s->name)
		return -ENOMEM;
	s->start = start;
	s->size = size;
	s->seq = m->next_seq++;
	m->n_symbols++;
	return 0;
}

/* Take the complete lines appended since the last read (all of it after a rewrite). */
static int read_appended(PerfMap *m)
{
	_cleanup_free_ char *buf = NULL;
	size_t have = 0, before = m->n_symbols;
	struct stat st;
	uint64_t end;
	int r = 0;

	if (fstat(m->fd, &st) < 0)
		return negative_errno();
	if ((uint64_t)st.st_size < m->parsed) {
		/* rewritten shorter: start over */
		symbols_clear(m);
		m->parsed = 0;
		before = 0;
	}
	end = (uint64_t)st.st_size < TARGET_FILE_PERF_MAP_MAX ? (uint64_t)st.st_size
							      : TARGET_FILE_PERF_MAP_MAX;
	if (end <= m->parsed)
		return 0;
	buf = malloc(READ_CHUNK + LINE_MAX_BYTES + 1);
	if (!buf)
		return -ENOMEM;
	while (m->parsed + have < end) {
		size_t want = end - m->parsed - have < READ_CHUNK ? end - m->parsed - have : READ_CHUNK;
		ssize_t n = pread(m->fd, buf + have, want, (off_t)(m->parsed + have));
		size_t line_start = 0;

		if (n <= 0)
			break;
		have += (size_t)n;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			r = add_line(m, buf + line_start, i - line_start);
			if (r < 0)
				break;
			line_start = i + 1;
		}
		if (r < 0)
			break;
		/* keep an incomplete last line for the next round (or the next read) */
		m->parsed += line_start;
		memmove(buf, buf + line_start, have - line_start);
		have -= line_start;
		if (have > LINE_MAX_BYTES) {
			/* an overlong line: skip to its end */
			m->parsed += have;
			have = 0;
		}
	}
	if (m->n_symbols > before)
		qsort(m->symbols, m->n_symbols, sizeof(PerfMapSymbol), symbol_compare);
	return r;
}

/* Bring the symbols up to date with the file: open it once it exists, read what was added. */
static int refresh(PerfMap *m)
{
	if (m->fd < 0) {
		TargetFileRequest req = { .kind = TARGET_FILE_PERF_MAP, .pid = m->pid };
		uint64_t now = clock_nanos(CLOCK_MONOTONIC_COARSE);
		int fd;

		if (now < m->next_open_ns)
			return 0;
		m->next_open_ns = now + REOPEN_INTERVAL_NS;
		fd = target_file_opener_open(m->files, &req);
		if (fd < 0)
			return 0;
		m->fd = fd;
	}
	return read_appended(m);
}

static const PerfMapSymbol *perf_map_find(const PerfMap *m, uint64_t addr)
{
	size_t lo = SORTED_UPPER_BOUND(m->symbols, m->n_symbols, start, addr);

	/* the nearest start wins, and for one start the latest line, as in perf */
	if (lo == 0 || addr - m->symbols[lo - 1].start >= m->symbols[lo - 1].size)
		return NULL;
	return &m->symbols[lo - 1];
}

int perf_map_lookup(PerfMap *m, uint64_t addr, const char **ret_name, uint64_t *ret_start)
{
	const PerfMapSymbol *s = perf_map_find(m, addr);

	if (!s) {
		int r = refresh(m);

		if (r == -ENOMEM)
			return r;
		s = perf_map_find(m, addr);
		if (!s)
			return -ENOENT;
	}
	if (ret_name)
		*ret_name = s->name;
	if (ret_start)
		*ret_start = s->start;
	return 0;
}
