/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The process model: /proc/self/maps loaded and searchable; mappings added
 * as MMAP2 records would add them, replacing and splitting what they
 * overlap; the generation moving on every change.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"
#include "process-maps.h"

static int failures;

#define check(cond, ...)                                                                    \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,   \
				#cond);                                                     \
			fprintf(stderr, __VA_ARGS__);                                       \
			fputc('\n', stderr);                                                \
			failures++;                                                         \
		}                                                                           \
	} while (0)

static void dump(const ProcessMaps *m)
{
	for (size_t i = 0; i < m->n_mappings; i++)
		fprintf(stderr, "  %zu: %llx-%llx pgoff %llx %s\n", i,
			(unsigned long long)m->mappings[i].start, (unsigned long long)m->mappings[i].end,
			(unsigned long long)m->mappings[i].pgoff,
			m->mappings[i].path ? m->mappings[i].path : "(anon)");
}

static bool sorted_disjoint(const ProcessMaps *m)
{
	for (size_t i = 0; i < m->n_mappings; i++) {
		if (m->mappings[i].start >= m->mappings[i].end)
			return false;
		if (i > 0 && m->mappings[i - 1].end > m->mappings[i].start)
			return false;
	}
	return true;
}

static void test_load_self(void)
{
	ProcessMaps *m = NULL;
	const ProcessMapping *code;
	char exe[4096];
	ssize_t n;
	int r;

	r = process_maps_load((uint32_t)getpid(), &m);
	check(r == 0, "load: %d", r);
	if (r < 0)
		return;
	check(m->n_mappings > 5 && sorted_disjoint(m), "n %zu", m->n_mappings);
	code = process_maps_find(m, (uint64_t)(uintptr_t)&test_load_self);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	check(code && code->path && strcmp(code->path, exe) == 0 && (code->prot & PROT_EXEC),
	      "own code mapped to %s", code && code->path ? code->path : "(nothing)");
	check(process_maps_find(m, 0) == NULL, "address 0 mapped");
	check(process_maps_load(0, &m) == -ESRCH, "pid 0 loaded");
	process_maps_free(m);
}

static void test_add(void)
{
	ProcessMaps *m = NULL;
	const ProcessMapping *f;
	uint64_t g;

	check(process_maps_new(1, &m) == 0, "new");
	g = m->generation;
	check(process_maps_add(m, &(ProcessMapping){ .start = 0x1000, .end = 0x9000, .path = "/a" }) ==
		      0, "add a");
	check(process_maps_add(m, &(ProcessMapping){ .start = 0x10000, .end = 0x11000,
						      .path = "/b" }) == 0, "add b");
	check(m->generation == g + 2, "generation %llu", (unsigned long long)m->generation);

	/* into the middle of /a: /a splits around it, the upper part's offset moves on */
	check(process_maps_add(m, &(ProcessMapping){ .start = 0x3000, .end = 0x4000, .path = "/c" }) == 0,
	      "add c");
	check(m->n_mappings == 4 && sorted_disjoint(m), "split: n %zu", m->n_mappings);
	f = process_maps_find(m, 0x3800);
	check(f && strcmp(f->path, "/c") == 0, "0x3800 in /c");
	f = process_maps_find(m, 0x5000);
	check(f && strcmp(f->path, "/a") == 0 && f->start == 0x4000 && f->pgoff == 0x3000,
	      "upper part of /a: start %llx pgoff %llx", f ? (unsigned long long)f->start : 0ULL,
	      f ? (unsigned long long)f->pgoff : 0ULL);
	f = process_maps_find(m, 0x2fff);
	check(f && strcmp(f->path, "/a") == 0 && f->end == 0x3000, "lower part of /a");

	/* covering several: everything overlapped goes, partial overlaps are trimmed */
	check(process_maps_add(m, &(ProcessMapping){ .start = 0x2000, .end = 0x10800 }) == 0, "add anon");
	check(sorted_disjoint(m) && m->n_mappings == 3, "cover: n %zu", m->n_mappings);
	f = process_maps_find(m, 0x10900);
	check(f && strcmp(f->path, "/b") == 0 && f->start == 0x10800 && f->pgoff == 0x800,
	      "trimmed /b");
	f = process_maps_find(m, 0x5000);
	check(f && f->path == NULL, "anonymous mapping");
	check(process_maps_find(m, 0x11000) == NULL, "end is exclusive");

	check(process_maps_add(m, &(ProcessMapping){ .start = 0x5000, .end = 0x5000 }) == -EINVAL,
	      "empty mapping accepted");

	g = m->generation;
	process_maps_reset(m);
	check(m->n_mappings == 0 && m->generation == g + 1, "reset");
	if (failures)
		dump(m);
	process_maps_free(m);
}

/* Many inserts, in random order, keep the invariants. */
static void test_many(void)
{
	ProcessMaps *m = NULL;
	unsigned seed = 1;

	check(process_maps_new(1, &m) == 0, "new");
	for (int i = 0; i < 2000; i++) {
		uint64_t start, len;

		seed = seed * 1103515245 + 12345;
		start = (seed >> 8) % 0x100000 & ~0xfffULL;
		seed = seed * 1103515245 + 12345;
		len = ((seed >> 8) % 16 + 1) * 0x1000;
		if (process_maps_add(m, &(ProcessMapping){ .start = start, .end = start + len,
							   .path = (i % 2) ? "/lib" : NULL }) < 0) {
			check(false, "add %d", i);
			break;
		}
		if (!sorted_disjoint(m)) {
			check(false, "invariant broken after insert %d", i);
			dump(m);
			break;
		}
		if (!process_maps_find(m, start) || process_maps_find(m, start)->start != start) {
			check(false, "insert %d not found at its start", i);
			break;
		}
	}
	process_maps_free(m);
}

int main(void)
{
	test_load_self();
	test_add();
	test_many();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
