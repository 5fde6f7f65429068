/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sandbox-probe: run in place of profd inside profd.service's sandbox, it
 * prints one "check=result" line per thing the unit decides, for
 * test-sandbox.sh to compare with what DESIGN.md §8 wants. A result is "ok",
 * or the errno name a call failed with.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *check, long r)
{
	printf("%s=%s\n", check, r >= 0 ? "ok" : strerrorname_np(errno) ?: "unknown");
}

static long open_read(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Open and read a byte: "empty" (what systemd's inaccessible stub gives), "data" or the errno. */
static void read_one(const char *check, const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;
	char c;

	if (fd < 0) {
		report(check, -1);
		return;
	}
	n = read(fd, &c, 1);
	if (n < 0 && errno != EAGAIN)
		report(check, -1);
	else
		printf("%s=%s\n", check, n == 0 ? "empty" : "data");
	close(fd);
}

/* The first /proc/kallsyms line has a non-zero address only for CAP_SYSLOG holders. */
static void kallsyms_addresses(void)
{
	unsigned long long address = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f) {
		report("kallsyms", -1);
		return;
	}
	if (fscanf(f, "%llx", &address) != 1)
		address = 0;
	fclose(f);
	printf("kallsyms=%s\n", address ? "addresses" : "zeros");
}

/*
 * A cgroup target as profd opens one (ProtectControlGroups= makes the tree
 * read-only): the cgroup2 directory of our own unit, its member list, and a
 * perf event counting its tasks on CPU 0.
 */
static void cgroup_target(struct perf_event_attr *attr)
{
	char line[512], dir[600], procs[620];
	const char *path = NULL;
	FILE *f = fopen("/proc/self/cgroup", "re");
	long r;
	int fd;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			path = line + 3;
			break;
		}
	if (f)
		fclose(f);
	if (!path) {
		printf("cgroup=no-cgroup2\n");
		return;
	}
	/* a hybrid hierarchy has cgroup2 at unified/ */
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/unified%s", path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", path);
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	report("cgroup_open", fd);
	if (fd < 0)
		return;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	report("cgroup_procs", open_read(procs, O_RDONLY));
	r = syscall(SYS_perf_event_open, attr, fd, 0, -1, PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
	report("cgroup_perf", r);
	if (r >= 0)
		close((int)r);
	close(fd);
}

/* What the unwinder helper does to itself: a seccomp filter, then a Landlock ruleset. */
static int confine_self(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };
	struct landlock_ruleset_attr ruleset = { .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE };
	long abi, fd;

	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		printf("seccomp=%s\n", strerrorname_np(errno));
		return 1;
	}
	printf("seccomp=ok\n");
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		/* EOPNOTSUPP: the kernel runs without Landlock; EPERM would be the unit's filter */
		printf("landlock=%s\n", strerrorname_np(errno));
		return errno == EOPNOTSUPP ? 0 : 1;
	}
	fd = syscall(SYS_landlock_create_ruleset, &ruleset, sizeof(ruleset), 0);
	if (fd < 0) {
		printf("landlock=ruleset-%s\n", strerrorname_np(errno));
		return 1;
	}
	if (syscall(SYS_landlock_restrict_self, fd, 0) < 0) {
		printf("landlock=restrict-%s\n", strerrorname_np(errno));
		return 1;
	}
	/* confined: reading a file is refused now */
	printf("landlock=%s\n", open_read("/etc/hostname", O_RDONLY) < 0 && errno == EACCES ?
					"ok" : "not-enforced");
	return 0;
}

int main(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
	};
	struct iovec iov;
	char buf[64];
	pid_t child;
	long r;
	int status, pidfd;

	/* what profiling needs */
	r = syscall(SYS_perf_event_open, &attr, 1, -1, -1, PERF_FLAG_FD_CLOEXEC);
	report("perf_event_open", r);
	if (r >= 0)
		close((int)r);
	kallsyms_addresses();
	cgroup_target(&attr);
	report("proc_1_maps", open_read("/proc/1/maps", O_RDONLY));

	/* what it must not do */
	/* a harmless request (ESRCH: pid 1 is not our tracee) tells the filter's EPERM apart */
	report("ptrace", syscall(SYS_ptrace, PTRACE_PEEKDATA, 1, NULL, NULL));
	report("proc_1_mem_write", open_read("/proc/1/mem", O_WRONLY));
	pidfd = (int)syscall(SYS_pidfd_open, 1, 0);
	report("pidfd_getfd", pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, 0, 0));
	if (pidfd >= 0)
		close(pidfd);
	iov = (struct iovec){ .iov_base = buf, .iov_len = 1 };
	report("process_vm_readv", syscall(SYS_process_vm_readv, 1, &iov, 1, &iov, 1, 0));
	report("syslog", syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0));
	read_one("proc_kmsg", "/proc/kmsg");
	read_one("proc_kcore", "/proc/kcore");
	report("proc_sys_write", open_read("/proc/sys/kernel/perf_event_paranoid", O_WRONLY));
	read_one("dev_kmsg", "/dev/kmsg");
	report("socket_inet", socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	report("etc_write", open_read("/etc/profd-probe", O_WRONLY | O_CREAT));
	snprintf(buf, sizeof(buf), "%s/probe", getenv("STATE_DIRECTORY") ?: "/var/lib/profd");
	report("state_write", open_read(buf, O_WRONLY | O_CREAT));
	unlink(buf);

	/* the helper's self-confinement, in a child as the helper would be */
	fflush(stdout);
	child = fork();
	if (child == 0) {
		status = confine_self();
		fflush(stdout);
		_exit(status);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		printf("confine=failed\n");
	return 0;
}
