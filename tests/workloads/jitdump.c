/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-jitdump DIR [SECONDS [GO_FILE]]: a JIT announcing its code in DIR/jit-<pid>.dump
 * (perf's jitdump format, mapped so profilers find it, as V8 --perf-prof
 * does) and running it in three equal phases:
 *   1. jit_first at address X;
 *   2. jit_first freed and X reused for jit_second (a new JIT_CODE_LOAD there);
 *   3. jit_second moved to address Y (JIT_CODE_MOVE), X overwritten.
 * A profiler naming by address alone calls phase 2 jit_first; by time, it
 * names each phase right. Then it waits to be killed, its file still mapped
 * for a profiler that reads it late; the file stays for the caller to remove.
 * With GO_FILE, it creates and maps anything only once that file exists.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spin.h"

/* x86-64: mov $0x100000,%ecx; 1: dec %ecx; jnz 1b; ret */
static const unsigned char spin_code[] = {
	0xb9, 0x00, 0x00, 0x10, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3,
};

struct header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct record {
	uint32_t id, total_size;
	uint64_t timestamp;
};

struct code_load {
	struct record r;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

struct code_move {
	struct record r;
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

static int dump_fd;
static uint64_t code_index;

static void write_all(const void *p, size_t n)
{
	if (write(dump_fd, p, n) != (ssize_t)n)
		perror("workload-jitdump: write");
}

static void announce_load(void *code, const char *name)
{
	size_t name_size = strlen(name) + 1;
	struct code_load l = {
		.r = { 0, (uint32_t)(sizeof(l) + name_size + sizeof(spin_code)), workload_now_ns() },
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)syscall(SYS_gettid),
		.vma = (uint64_t)(uintptr_t)code,
		.code_addr = (uint64_t)(uintptr_t)code,
		.code_size = sizeof(spin_code),
		.code_index = code_index++,
	};

	write_all(&l, sizeof(l));
	write_all(name, name_size);
	write_all(spin_code, sizeof(spin_code));
}

static void announce_move(void *from, void *to)
{
	struct code_move m = {
		.r = { 1, sizeof(m), workload_now_ns() },
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)syscall(SYS_gettid),
		.vma = (uint64_t)(uintptr_t)to,
		.old_code_addr = (uint64_t)(uintptr_t)from,
		.new_code_addr = (uint64_t)(uintptr_t)to,
		.code_size = sizeof(spin_code),
		.code_index = code_index - 1,
	};

	write_all(&m, sizeof(m));
}

static void run(void *code, double seconds)
{
	uint64_t end = workload_now_ns() + (uint64_t)(seconds * 1e9);
	void (*spin)(void);

	*(void **)&spin = code;
	while (workload_now_ns() < end)
		spin();
}

int main(int argc, char **argv)
{
	double phase = workload_seconds(argc, argv, 2, 3.0) / 3;
	struct header h = {
		.magic = 0x4A695444, .version = 1, .total_size = sizeof(h), .elf_mach = 62,
		.pid = (uint32_t)getpid(), .timestamp = workload_now_ns(),
	};
	char path[4096];
	unsigned char *code;
	void *marker;

	if (argc < 2) {
		fprintf(stderr, "usage: workload-jitdump DIR [SECONDS [GO_FILE]]\n");
		return 2;
	}
	if (argc > 3)
		workload_wait_for_file(argv[3]);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", argv[1], (int)getpid());
	dump_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (dump_fd < 0) {
		perror("workload-jitdump: open");
		return 1;
	}
	write_all(&h, sizeof(h));
	/* profilers find the file through this mapping, as perf does */
	marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, dump_fd, 0);
	code = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (marker == MAP_FAILED || code == MAP_FAILED) {
		perror("workload-jitdump: mmap");
		return 1;
	}

	memcpy(code, spin_code, sizeof(spin_code));
	announce_load(code, "jit_first");
	run(code, phase);

	/* freed and reused: the same address holds other code now */
	announce_load(code, "jit_second");
	run(code, phase);

	/* moved to the next page; the old place no longer holds it */
	memcpy(code + 4096, spin_code, sizeof(spin_code));
	announce_move(code, code + 4096);
	memset(code, 0xcc, sizeof(spin_code));
	run(code + 4096, phase);

	/* the file stays mapped until the profiler is done with it (it kills us) */
	for (;;)
		pause();
}
