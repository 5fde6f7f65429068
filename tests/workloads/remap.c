/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-remap [SECONDS [GO_FILE]]: maps its own text segment a second time at
 * another address and spends its time in remap_hot() run from that copy, as
 * V8 does with node's embedded builtins. Built as a non-PIE executable
 * (ET_EXEC), like the node Debian users get from NodeSource: a profiler must
 * name code in the copy from the file's symbols and debug info. With GO_FILE,
 * it maps the copy only once that file exists (a test picks the moment).
 */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spin.h"

typedef uint64_t (*HotFn)(uint64_t x, uint64_t n);

static volatile uint64_t sink;

/* Registers only: it runs from the copy, where nothing outside the text segment is reachable. */
static __attribute__((noinline, no_sanitize("address", "undefined"))) uint64_t
remap_hot(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		x ^= x >> 31;
		x *= 0x9e3779b97f4a7c15ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

typedef struct TextSegment {
	uintptr_t hot;     /* remap_hot's address */
	uintptr_t vaddr;   /* page-aligned start of the segment holding it */
	off_t offset;      /* its file offset */
	size_t size;
} TextSegment;

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	TextSegment *t = arg;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || t->hot < start ||
		    t->hot >= start + ph->p_memsz)
			continue;
		t->vaddr = start & ~(page - 1);
		t->offset = (off_t)(ph->p_offset & ~(page - 1));
		t->size = start + ph->p_filesz - t->vaddr;
		return 1;
	}
	return 0;
}

static __attribute__((noinline)) uint64_t run_remapped(HotFn hot, double seconds)
{
	uint64_t end = workload_now_ns() + (uint64_t)(seconds * 1e9), x = 1;

	while (workload_now_ns() < end)
		x = hot(x, 1000000);
	return x;
}

int main(int argc, char **argv)
{
	double seconds = workload_seconds(argc, argv, 1, 3.0);
	TextSegment t = { .hot = (uintptr_t)remap_hot };
	void *copy;
	int fd;

	if (argc > 2)
		workload_wait_for_file(argv[2]);
	if (!dl_iterate_phdr(find_text, &t)) {
		fprintf(stderr, "workload-remap: remap_hot is in no executable segment\n");
		return 1;
	}
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("workload-remap: /proc/self/exe");
		return 1;
	}
	copy = mmap(NULL, t.size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, t.offset);
	close(fd);
	if (copy == MAP_FAILED) {
		perror("workload-remap: mmap");
		return 1;
	}
	sink = run_remapped((HotFn)((uintptr_t)copy + (t.hot - t.vaddr)), seconds);
	return 0;
}
