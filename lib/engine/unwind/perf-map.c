/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perf-map.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "sorted.h"

typedef struct PerfMapSymbol {
	uint64_t start, size;
	char *name;
} PerfMapSymbol;

struct PerfMap {
	char *path; /* where it is read */
	char *name; /* what the target calls it */
	PerfMapSymbol *symbols; /* sorted by start */
	size_t n_symbols;
	/* what the loaded symbols came from, to notice appends and rewrites */
	struct timespec mtime;
	off_t size;
	ino_t inode;
};

static void symbols_free(PerfMapSymbol *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].name);
	free(s);
}

PerfMap *perf_map_free(PerfMap *m)
{
	if (!m)
		return NULL;
	symbols_free(m->symbols, m->n_symbols);
	free(m->path);
	free(m->name);
	free(m);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(PerfMap *, perf_map_free);

/* The target's pid as it knows itself (the last NSpid: inside its pid namespace). */
static pid_t namespace_pid(pid_t pid)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	char path[64];
	size_t size = 0;
	pid_t ns = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && getline(&line, &size, f) > 0)
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *last = strrchr(line, '\t') ?: line + 6;

			ns = (pid_t)strtol(last, NULL, 10) ?: pid;
			break;
		}
	return ns;
}

int perf_map_new(pid_t pid, const char *path, PerfMap **ret)
{
	_cleanup_(perf_map_freep) PerfMap *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	/*
	 * The target's own /tmp, seen through its root: right for containers and
	 * when the profiler runs with a private /tmp.
	 */
	if (path) {
		m->path = strdup(path);
		m->name = strdup(path);
	} else {
		pid_t ns = namespace_pid(pid);

		if (asprintf(&m->path, "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)ns) < 0)
			m->path = NULL;
		if (asprintf(&m->name, "/tmp/perf-%d.map", (int)ns) < 0)
			m->name = NULL;
	}
	if (!m->path || !m->name)
		return -ENOMEM;
	*ret = TAKE_PTR(m);
	return 0;
}

const char *perf_map_name(const PerfMap *m)
{
	return m->name;
}

static int symbol_compare(const void *a, const void *b)
{
	const PerfMapSymbol *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int perf_map_reload(PerfMap *m, const struct stat *st)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	PerfMapSymbol *symbols = NULL;
	size_t n = 0, allocated = 0, line_size = 0;
	ssize_t len;
	int r = 0;

	f = fopen(m->path, "re");
	if (!f)
		return negative_errno();
	while ((len = getline(&line, &line_size, f)) >= 0) {
		unsigned long long start, size;
		int name_off = 0;

		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (sscanf(line, "%llx %llx %n", &start, &size, &name_off) < 2 || name_off == 0 ||
		    line[name_off] == '\0')
			continue;
		if (n == allocated) {
			size_t a = allocated ? allocated * 2 : 64;
			PerfMapSymbol *s = reallocarray(symbols, a, sizeof(PerfMapSymbol));

			if (!s) {
				r = -ENOMEM;
				break;
			}
			symbols = s;
			allocated = a;
		}
		symbols[n].name = strdup(line + name_off);
		if (!symbols[n].name) {
			r = -ENOMEM;
			break;
		}
		symbols[n].start = start;
		symbols[n].size = size;
		n++;
	}
	if (r < 0) {
		symbols_free(symbols, n);
		return r;
	}
	qsort(symbols, n, sizeof(PerfMapSymbol), symbol_compare);
	symbols_free(m->symbols, m->n_symbols);
	m->symbols = symbols;
	m->n_symbols = n;
	m->mtime = st->st_mtim;
	m->size = st->st_size;
	m->inode = st->st_ino;
	return 0;
}

static const PerfMapSymbol *perf_map_find(const PerfMap *m, uint64_t addr)
{
	size_t lo = SORTED_UPPER_BOUND(m->symbols, m->n_symbols, start, addr);

	/* later entries may re-announce a region: the nearest start wins, as in perf */
	if (lo == 0 || addr - m->symbols[lo - 1].start >= m->symbols[lo - 1].size)
		return NULL;
	return &m->symbols[lo - 1];
}

int perf_map_lookup(PerfMap *m, uint64_t addr, const char **ret_name, uint64_t *ret_start)
{
	const PerfMapSymbol *s = perf_map_find(m, addr);
	struct stat st;

	if (!s) {
		bool changed;
		int r;

		if (stat(m->path, &st) < 0)
			return -ENOENT;
		changed = st.st_ino != m->inode || st.st_size != m->size ||
			  st.st_mtim.tv_sec != m->mtime.tv_sec ||
			  st.st_mtim.tv_nsec != m->mtime.tv_nsec;
		if (!changed)
			return -ENOENT;
		r = perf_map_reload(m, &st);
		if (r < 0)
			return r == -ENOMEM ? r : -ENOENT;
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
