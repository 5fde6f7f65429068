/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The process model: /proc/self/maps loaded and searchable; mappings added
 * as MMAP2 records would add them, replacing and splitting what they
 * overlap; the generation moving on every change; the maps of a process
 * that merges and splits its mappings while they are read.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "process-maps.h"
#include "test-util.h"

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
	CHECK(r == 0, "load: %d", r);
	if (r < 0)
		return;
	CHECK(m->n_mappings > 5 && sorted_disjoint(m), "n %zu", m->n_mappings);
	code = process_maps_find(m, (uint64_t)(uintptr_t)&test_load_self);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	CHECK(code && code->path && strcmp(code->path, exe) == 0 && (code->prot & PROT_EXEC),
	      "own code mapped to %s", code && code->path ? code->path : "(nothing)");
	CHECK(process_maps_find(m, 0) == NULL, "address 0 mapped");
	CHECK(process_maps_load(0, &m) == -ESRCH, "pid 0 loaded");
	process_maps_free(m);
}

static void test_add(void)
{
	ProcessMaps *m = NULL;
	const ProcessMapping *f;
	uint64_t g;

	CHECK(process_maps_new(1, &m) == 0, "new");
	g = m->generation;
	CHECK(process_maps_add(m, &(ProcessMapping){ .start = 0x1000, .end = 0x9000, .path = "/a" }) ==
		      0, "add a");
	CHECK(process_maps_add(m, &(ProcessMapping){ .start = 0x10000, .end = 0x11000,
						      .path = "/b" }) == 0, "add b");
	CHECK(m->generation == g + 2, "generation %llu", (unsigned long long)m->generation);

	/* into the middle of /a: /a splits around it, the upper part's offset moves on */
	CHECK(process_maps_add(m, &(ProcessMapping){ .start = 0x3000, .end = 0x4000, .path = "/c" }) == 0,
	      "add c");
	CHECK(m->n_mappings == 4 && sorted_disjoint(m), "split: n %zu", m->n_mappings);
	f = process_maps_find(m, 0x3800);
	CHECK(f && strcmp(f->path, "/c") == 0, "0x3800 in /c");
	f = process_maps_find(m, 0x5000);
	CHECK(f && strcmp(f->path, "/a") == 0 && f->start == 0x4000 && f->pgoff == 0x3000,
	      "upper part of /a: start %llx pgoff %llx", f ? (unsigned long long)f->start : 0ULL,
	      f ? (unsigned long long)f->pgoff : 0ULL);
	f = process_maps_find(m, 0x2fff);
	CHECK(f && strcmp(f->path, "/a") == 0 && f->end == 0x3000, "lower part of /a");

	/* covering several: everything overlapped goes, partial overlaps are trimmed */
	CHECK(process_maps_add(m, &(ProcessMapping){ .start = 0x2000, .end = 0x10800 }) == 0, "add anon");
	CHECK(sorted_disjoint(m) && m->n_mappings == 3, "cover: n %zu", m->n_mappings);
	f = process_maps_find(m, 0x10900);
	CHECK(f && strcmp(f->path, "/b") == 0 && f->start == 0x10800 && f->pgoff == 0x800,
	      "trimmed /b");
	f = process_maps_find(m, 0x5000);
	CHECK(f && f->path == NULL, "anonymous mapping");
	CHECK(process_maps_find(m, 0x11000) == NULL, "end is exclusive");

	CHECK(process_maps_add(m, &(ProcessMapping){ .start = 0x5000, .end = 0x5000 }) == -EINVAL,
	      "empty mapping accepted");

	g = m->generation;
	process_maps_reset(m);
	CHECK(m->n_mappings == 0 && m->generation == g + 1, "reset");
	if (test_failures)
		dump(m);
	process_maps_free(m);
}

/* Many inserts, in random order, keep the invariants. */
static void test_many(void)
{
	ProcessMaps *m = NULL;
	unsigned seed = 1;

	CHECK(process_maps_new(1, &m) == 0, "new");
	for (int i = 0; i < 2000; i++) {
		uint64_t start, len;

		seed = seed * 1103515245 + 12345;
		start = (seed >> 8) % 0x100000 & ~0xfffULL;
		seed = seed * 1103515245 + 12345;
		len = ((seed >> 8) % 16 + 1) * 0x1000;
		if (process_maps_add(m, &(ProcessMapping){ .start = start, .end = start + len,
							   .path = (i % 2) ? "/lib" : NULL }) < 0) {
			CHECK(false, "add %d", i);
			break;
		}
		if (!sorted_disjoint(m)) {
			CHECK(false, "invariant broken after insert %d", i);
			dump(m);
			break;
		}
		if (!process_maps_find(m, start) || process_maps_find(m, start)->start != start) {
			CHECK(false, "insert %d not found at its start", i);
			break;
		}
	}
	process_maps_free(m);
}

/*
 * A child that merges and splits its mappings without pause (mprotect of every
 * other page of a region): the kernel may then list a mapping that overlaps the
 * lines read before it. Every load succeeds and keeps the invariants.
 */
static void test_load_changing(void)
{
	const size_t pages = 2000;
	long page = sysconf(_SC_PAGESIZE);
	unsigned failed = 0;
	int ready[2];
	pid_t child;
	char c;

	if (pipe(ready) < 0)
		exit(EXIT_FAILURE);
	child = fork();
	if (child < 0)
		exit(EXIT_FAILURE);
	if (child == 0) {
		char *base = mmap(NULL, pages * (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);

		if (base == MAP_FAILED)
			_exit(1);
		for (size_t i = 0; i < pages; i += 2)
			mprotect(base + i * (size_t)page, (size_t)page, PROT_READ | PROT_WRITE);
		if (write(ready[1], "", 1) != 1)
			_exit(1);
		for (unsigned seed = 1;; seed = seed * 1103515245 + 12345) {
			char *p = base + ((seed >> 8) % (pages / 2) * 2 + 1) * (size_t)page;

			mprotect(p, (size_t)page, PROT_READ | PROT_WRITE); /* three become one */
			mprotect(p, (size_t)page, PROT_READ);              /* and three again */
		}
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1, "the child set up its mappings");
	close(ready[0]);
	for (int i = 0; i < 400; i++) {
		ProcessMaps *m = NULL;
		int r = process_maps_load((uint32_t)child, &m);

		if (r < 0 || !sorted_disjoint(m) || m->n_mappings < pages / 2)
			failed++;
		if (r < 0)
			fprintf(stderr, "load %d: %s\n", i, strerror(-r));
		process_maps_free(m);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK(failed == 0, "%u of 400 loads of a changing process failed or broke the order",
	      failed);
}

int main(void)
{
	test_load_self();
	test_add();
	test_many();
	test_load_changing();
	return test_result();
}
