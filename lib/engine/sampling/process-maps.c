/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "process-maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "array.h"
#include "cleanup.h"
#include "sorted.h"

/*
 * Generations are unique across all ProcessMaps of the program, so a consumer
 * following one address space after another (the spaces of a process that
 * exec'ed) can never mistake one for another with the same count of changes.
 */
static uint64_t next_generation(void)
{
	static uint64_t last;

	return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

static void mapping_clear(ProcessMapping *m)
{
	free(m->path);
	m->path = NULL;
}

ProcessMaps *process_maps_free(ProcessMaps *m)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n_mappings; i++)
		mapping_clear(&m->mappings[i]);
	free(m->mappings);
	free(m);
	return NULL;
}

void process_maps_reset(ProcessMaps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_mappings; i++)
		mapping_clear(&m->mappings[i]);
	m->n_mappings = 0;
	m->generation = next_generation();
}

static int maps_reserve(ProcessMaps *m, size_t extra)
{
	return ARRAY_RESERVE(m->mappings, m->n_allocated, m->n_mappings + extra, 64);
}

/* First mapping whose end is above addr. */
static size_t maps_lower_bound(const ProcessMaps *m, uint64_t addr)
{
	return SORTED_UPPER_BOUND(m->mappings, m->n_mappings, end, addr);
}

const ProcessMapping *process_maps_find(const ProcessMaps *m, uint64_t addr)
{
	size_t i;

	if (!m)
		return NULL;
	i = maps_lower_bound(m, addr);
	if (i < m->n_mappings && m->mappings[i].start <= addr)
		return &m->mappings[i];
	return NULL;
}

int process_maps_add(ProcessMaps *m, const ProcessMapping *mapping)
{
	_cleanup_free_ char *path = NULL;
	ProcessMapping tail = {};
	size_t first, last, n_tail = 0;
	int r;

	if (!m || !mapping || mapping->end <= mapping->start)
		return -EINVAL;
	if (mapping->path) {
		path = strdup(mapping->path);
		if (!path)
			return -ENOMEM;
	}

	first = maps_lower_bound(m, mapping->start);
	/* an old mapping straddling the new one's end keeps its upper part */
	if (first < m->n_mappings && m->mappings[first].start < mapping->start &&
	    m->mappings[first].end > mapping->end) {
		tail = m->mappings[first];
		tail.pgoff += mapping->end - tail.start;
		tail.start = mapping->end;
		if (tail.path) {
			tail.path = strdup(tail.path);
			if (!tail.path)
				return -ENOMEM;
		}
		n_tail = 1;
	}

	r = maps_reserve(m, 1 + n_tail);
	if (r < 0) {
		free(tail.path);
		return r;
	}

	/* trim an old mapping that begins below the new one */
	if (first < m->n_mappings && m->mappings[first].start < mapping->start) {
		m->mappings[first].end = mapping->start;
		first++;
	}
	/* drop old mappings fully covered, trim one overlapping the new end */
	last = first;
	while (last < m->n_mappings && m->mappings[last].end <= mapping->end) {
		mapping_clear(&m->mappings[last]);
		last++;
	}
	if (last < m->n_mappings && m->mappings[last].start < mapping->end) {
		ProcessMapping *o = &m->mappings[last];

		o->pgoff += mapping->end - o->start;
		o->start = mapping->end;
	}

	/* replace [first, last) by the new mapping and the split-off tail */
	memmove(&m->mappings[first + 1 + n_tail], &m->mappings[last],
		(m->n_mappings - last) * sizeof(ProcessMapping));
	m->n_mappings = m->n_mappings - (last - first) + 1 + n_tail;
	m->mappings[first] = *mapping;
	m->mappings[first].path = TAKE_PTR(path);
	if (n_tail)
		m->mappings[first + 1] = tail;
	m->generation = next_generation();
	return 0;
}

int process_maps_new(uint32_t pid, ProcessMaps **ret)
{
	ProcessMaps *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->pid = pid;
	m->generation = next_generation();
	*ret = m;
	return 0;
}

int process_maps_clone(const ProcessMaps *from, uint32_t pid, ProcessMaps **ret)
{
	_cleanup_(process_maps_freep) ProcessMaps *m = NULL;
	int r;

	r = process_maps_new(pid, &m);
	if (r < 0)
		return r;
	r = maps_reserve(m, from->n_mappings);
	if (r < 0)
		return r;
	for (size_t i = 0; i < from->n_mappings; i++) {
		ProcessMapping *c = &m->mappings[i];

		*c = from->mappings[i];
		if (c->path) {
			c->path = strdup(c->path);
			if (!c->path)
				return -ENOMEM;
		}
		m->n_mappings++;
	}
	*ret = TAKE_PTR(m);
	return 0;
}

static uint32_t parse_prot(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

/* One line of /proc/<pid>/maps: "start-end perms offset major:minor inode   path". */
static int parse_maps_line(const char *line, ProcessMapping *ret, const char **ret_path)
{
	uint64_t start, end, pgoff, inode;
	unsigned major, minor;
	char perms[5];
	int consumed = 0;
	const char *path;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n", &start, &end,
		   perms, &pgoff, &major, &minor, &inode, &consumed) < 7 ||
	    consumed <= 0 || end <= start || strlen(perms) < 3)
		return -EBADMSG;
	path = line + consumed;
	path += strspn(path, " \t");

	*ret = (ProcessMapping){
		.start = start,
		.end = end,
		.pgoff = pgoff,
		.inode = inode,
		.dev_major = major,
		.dev_minor = minor,
		.prot = parse_prot(perms),
	};
	*ret_path = *path ? path : NULL;
	return 0;
}

int process_maps_load(uint32_t pid, ProcessMaps **ret)
{
	_cleanup_(process_maps_freep) ProcessMaps *m = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	char fn[64];
	size_t line_size = 0;
	ssize_t n;
	int r;

	snprintf(fn, sizeof(fn), "/proc/%" PRIu32 "/maps", pid);
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : negative_errno();

	r = process_maps_new(pid, &m);
	if (r < 0)
		return r;

	while ((n = getline(&line, &line_size, f)) > 0) {
		ProcessMapping mapping;
		const char *path;

		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		r = parse_maps_line(line, &mapping, &path);
		if (r < 0)
			return r;
		/*
		 * Sorted and disjoint, unless mappings were merged or split while we read:
		 * then a line may overlap earlier ones, and being read later it is the newer
		 * truth (it replaces them, as an mmap would).
		 */
		if (m->n_mappings > 0 && mapping.start < m->mappings[m->n_mappings - 1].end) {
			mapping.path = (char *)path;
			r = process_maps_add(m, &mapping);
			if (r < 0)
				return r;
			continue;
		}
		r = maps_reserve(m, 1);
		if (r < 0)
			return r;
		if (path) {
			mapping.path = strdup(path);
			if (!mapping.path)
				return -ENOMEM;
		}
		m->mappings[m->n_mappings++] = mapping;
	}
	/* a process that is reaped while we read fails the read with ESRCH */
	if (ferror(f))
		return errno == ESRCH ? -ESRCH : -EIO;
	*ret = TAKE_PTR(m);
	return 0;
}
