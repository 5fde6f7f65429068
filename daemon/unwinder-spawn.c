/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unwinder-spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* The unwinder finds its socket here. */
#define UNWINDER_FD 3
/*
 * Its open files: a session of many processes (a whole machine) holds one per
 * process and module it unwinds; past this, files are refused and go unnamed.
 */
#define UNWINDER_FILES_MAX 16384U

/* In the child, between vfork and exec (on profd's memory, profd waiting): system calls only. */
_Noreturn static void exec_helper(const char *path, int sock, uint64_t memory_bytes)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[2] = {};
	char *const argv[] = { (char *)"profd-unwinder", NULL };
	char *const envp[] = { NULL };
	struct rlimit zero = {}, files = { UNWINDER_FILES_MAX, UNWINDER_FILES_MAX }, hard;

	if (sock == UNWINDER_FD ? fcntl(sock, F_SETFD, 0) < 0 : dup2(sock, UNWINDER_FD) < 0)
		_exit(127);
	(void)syscall(SYS_close_range, UNWINDER_FD + 1, ~0U, 0);
	if (memory_bytes > 0) {
		struct rlimit as = { memory_bytes, memory_bytes };

		(void)setrlimit(RLIMIT_AS, &as);
	}
	(void)setrlimit(RLIMIT_CORE, &zero);
	/* within profd's own hard limit, which it cannot raise */
	if (getrlimit(RLIMIT_NOFILE, &hard) == 0 && hard.rlim_max < files.rlim_max)
		files.rlim_cur = files.rlim_max = hard.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &files);
	/* profd gone: nobody to answer; it goes too */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() == 1)
		_exit(127);
	/* no privilege at all, and none to regain by exec, not even as uid 0 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_capset, &header, none) < 0)
		_exit(127);
	execve(path, argv, envp);
	_exit(127);
}

/*
 * vfork: no copy of profd's page tables to make and fault back apart before the
 * exec (profd maps every session's backlog); the child only makes system calls.
 * A function of its own: the caller's locals are out of the child's reach.
 */
__attribute__((noinline)) static pid_t start_helper(const char *path, int sock,
						     uint64_t memory_bytes)
{
	pid_t pid = vfork();

	if (pid == 0)
		exec_helper(path, sock, memory_bytes);
	return pid < 0 ? negative_errno() : pid;
}

int unwinder_spawn(const char *path, uint64_t memory_bytes, pid_t *ret_pid, int *ret_pidfd,
		   int *ret_sock)
{
	_cleanup_close_ int mine = -1, theirs = -1;
	int sv[2], pidfd;
	pid_t pid;

#ifdef UNDER_ASAN
	/* AddressSanitizer reserves terabytes of shadow: an address-space limit stops it cold */
	memory_bytes = 0;
#endif
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return negative_errno();
	mine = sv[0];
	theirs = sv[1];
	pid = start_helper(path, theirs, memory_bytes);
	if (pid < 0)
		return pid;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		int r = negative_errno();

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return r;
	}
	*ret_pid = pid;
	*ret_pidfd = pidfd;
	*ret_sock = TAKE_FD(mine);
	return 0;
}
