/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * open-inside PID PATH...: the running process PID itself calls
 * openat(AT_FDCWD, PATH, O_RDONLY) for each PATH, and one line per PATH says
 * what it got: "ok" (the file is closed again in it) or the errno name. So
 * test-helper.sh shows that the unwinder profd started, under the installed
 * unit, is refused files by its own sandbox — not that a copy of it would be.
 *
 * ptrace (the caller needs CAP_SYS_PTRACE: the unwinder is not dumpable):
 * stop PID at its next system call, swap that call for the openat with the
 * path written below its stack pointer (past the red zone), take the result at
 * the exit stop, then put back its memory and registers with the instruction
 * pointer on the system call again, so the call it was making runs as if
 * nothing happened. Seccomp filters the swapped call: the kernel checks it
 * after the tracer's entry stop. x86-64 only.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "open-inside swaps x86-64 system calls"
#endif

#define PATH_MAX_BYTES 512
#define RED_ZONE 128

/* Resume to the next system-call stop (entry or exit), passing on signals meanwhile. */
static int next_syscall_stop(pid_t pid)
{
	int status, sig = 0;

	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, 0, sig) < 0 || waitpid(pid, &status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(status))
			return -ESRCH;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80))
			return 0;
		/* a ptrace event stop passes no signal; a signal-delivery stop passes its own */
		sig = status >> 16 ? 0 : WSTOPSIG(status);
	}
}

static bool at_entry(pid_t pid)
{
	struct __ptrace_syscall_info info;

	return ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(info), &info) > 0 &&
	       info.op == PTRACE_SYSCALL_INFO_ENTRY;
}

static int poke_bytes(pid_t pid, unsigned long addr, const void *buf, size_t n)
{
	for (size_t i = 0; i < n; i += sizeof(long)) {
		long word;

		memcpy(&word, (const char *)buf + i, sizeof(long));
		if (ptrace(PTRACE_POKEDATA, pid, addr + i, word) < 0)
			return -errno;
	}
	return 0;
}

static int peek_bytes(pid_t pid, unsigned long addr, void *buf, size_t n)
{
	for (size_t i = 0; i < n; i += sizeof(long)) {
		long word;

		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, pid, addr + i, 0);
		if (errno)
			return -errno;
		memcpy((char *)buf + i, &word, sizeof(long));
	}
	return 0;
}

/*
 * At a system-call entry stop: make this call openat(path), run it to its
 * exit stop; the result in *ret. Leaves PID at that exit stop.
 */
static int swap_for_openat(pid_t pid, const struct user_regs_struct *entry, const char *path,
			   long *ret)
{
	char buf[PATH_MAX_BYTES] = {}, saved[PATH_MAX_BYTES];
	struct user_regs_struct regs = *entry;
	unsigned long addr = (entry->rsp - RED_ZONE - sizeof(buf)) & ~15UL;
	int r;

	snprintf(buf, sizeof(buf), "%s", path);
	r = peek_bytes(pid, addr, saved, sizeof(saved));
	if (r == 0)
		r = poke_bytes(pid, addr, buf, sizeof(buf));
	if (r < 0)
		return r;
	regs.orig_rax = SYS_openat;
	regs.rdi = (unsigned long)AT_FDCWD;
	regs.rsi = addr;
	regs.rdx = O_RDONLY | O_CLOEXEC;
	regs.r10 = 0;
	if (ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0)
		return -errno;
	r = next_syscall_stop(pid);
	if (r < 0)
		return r;
	if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
		return -errno;
	*ret = (long)regs.rax;
	return poke_bytes(pid, addr, saved, sizeof(saved));
}

/*
 * At an exit stop: run the call of 'entry' again from the start (its
 * instruction is 2 bytes, "syscall"), and wait for its entry stop there.
 */
static int rewind_to(pid_t pid, const struct user_regs_struct *entry)
{
	struct user_regs_struct regs = *entry;

	regs.rip -= 2;
	regs.rax = regs.orig_rax;
	if (ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0)
		return -errno;
	return next_syscall_stop(pid);
}

/* At an exit stop: it opened a file after all; close it in there (the test fails anyway). */
static int close_inside(pid_t pid, const struct user_regs_struct *entry, int fd)
{
	struct user_regs_struct regs = *entry;
	int r = rewind_to(pid, entry);

	regs.orig_rax = SYS_close;
	regs.rdi = (unsigned long)fd;
	if (r == 0 && ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0)
		r = -errno;
	return r < 0 ? r : next_syscall_stop(pid);
}

int main(int argc, char **argv)
{
	struct user_regs_struct entry;
	pid_t pid;
	int status, r;

	if (argc < 3) {
		fprintf(stderr, "usage: open-inside PID PATH...\n");
		return EXIT_FAILURE;
	}
	pid = (pid_t)atoi(argv[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD) < 0 ||
	    ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 || waitpid(pid, &status, __WALL) < 0) {
		fprintf(stderr, "cannot stop process %d: %m\n", (int)pid);
		return EXIT_FAILURE;
	}
	/* the entry of its next call (a blocked one is restarted and stops here too) */
	do
		r = next_syscall_stop(pid);
	while (r == 0 && !at_entry(pid));
	if (r == 0 && ptrace(PTRACE_GETREGS, pid, 0, &entry) < 0)
		r = -errno;
	for (int i = 2; r == 0 && i < argc; i++) {
		long result = 0;

		r = swap_for_openat(pid, &entry, argv[i], &result);
		if (r == 0 && result >= 0)
			r = close_inside(pid, &entry, (int)result);
		if (r == 0)
			printf("%s %s\n", argv[i],
			       result >= 0 ? "ok" : strerrorname_np((int)-result) ?: "unknown");
		/* back at the entry of its own call for the next path, or to leave */
		if (r == 0)
			r = rewind_to(pid, &entry);
	}
	/* at an entry stop with its own registers: it makes its call when let go */
	if (r == 0 && ptrace(PTRACE_SETREGS, pid, 0, &entry) < 0)
		r = -errno;
	if (ptrace(PTRACE_DETACH, pid, 0, 0) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		fprintf(stderr, "cannot make process %d open files: %s\n", (int)pid, strerror(-r));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
