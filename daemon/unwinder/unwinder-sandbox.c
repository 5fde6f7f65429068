/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unwinder-sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"

/* Refuse to go on with any capability left: profd drops them all before exec. */
static int check_no_capabilities(void)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &header, data) < 0)
		return negative_errno();
	for (int i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return -EPERM;
	return 0;
}

/*
 * Landlock as the running kernel knows it, which may be newer than the headers
 * this is built with: the later rights and the attribute's later fields by value.
 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)

typedef struct LandlockAttr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
} LandlockAttr;

/* Every file system right, TCP and signals the kernel knows: none is granted. */
static int landlock_restrict(int *ret_abi)
{
	LandlockAttr attr = { .handled_access_fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1 };
	size_t size = sizeof(attr.handled_access_fs);
	long abi;
	int fd, r;

	*ret_abi = 0;
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0)
		/* no Landlock in this kernel (or not enabled): seccomp alone stands */
		return errno == ENOSYS || errno == EOPNOTSUPP ? 0 : negative_errno();
	if (abi >= 2)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		attr.handled_access_fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		attr.handled_access_fs |= LL_FS_IOCTL_DEV;
	if (abi >= 4) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = offsetof(LandlockAttr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return negative_errno();
	r = syscall(SYS_landlock_restrict_self, fd, 0) < 0 ? negative_errno() : 0;
	safe_close(fd);
	*ret_abi = (int)abi;
	return r;
}

/* The system calls the unwinder makes, and nothing else (the rest fail with EPERM). */
static int seccomp_restrict(void)
{
	static const int allowed[] = {
		/* the socket to profd, backlogs, descriptors profd sent */
		SCMP_SYS(read), SCMP_SYS(readv), SCMP_SYS(pread64), SCMP_SYS(write),
		SCMP_SYS(writev), SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(close),
		SCMP_SYS(lseek), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx),
		SCMP_SYS(fcntl), SCMP_SYS(poll), SCMP_SYS(ppoll),
		/* the profile it hands back, the vDSO image it reads */
		SCMP_SYS(memfd_create), SCMP_SYS(ftruncate),
		/* memory */
		SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
		/* time, identity of itself, the C library's needs */
		SCMP_SYS(clock_gettime), SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
		SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(getrandom), SCMP_SYS(futex),
		SCMP_SYS(sched_yield), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
		SCMP_SYS(sigaltstack), SCMP_SYS(exit), SCMP_SYS(exit_group),
		/* how the kernel resumes its poll after a stop (SIGSTOP, a debugger) */
		SCMP_SYS(restart_syscall),
	};
	scmp_filter_ctx ctx;
	int r = 0;

	ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; r == 0 && i < ELEMENTSOF(allowed); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* mappings, but never executable ones: nothing it reads becomes code */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				     SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				     SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	/* NO_NEW_PRIVS is libseccomp's default (SCMP_FLTATR_CTL_NNP) and profd set it already */
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

int unwinder_sandbox(int *ret_landlock_abi)
{
	int r;

	r = check_no_capabilities();
	if (r < 0)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return negative_errno();
	r = landlock_restrict(ret_landlock_abi);
	if (r < 0)
		return r;
	return seccomp_restrict();
}
