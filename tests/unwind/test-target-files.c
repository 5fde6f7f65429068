/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-target-files WORKLOAD: the rules of target_file_open() (DESIGN.md §8,
 * "files the target names") against real processes: a target running as
 * uid 65534 whose perf map is planted as a symlink, a FIFO, a file of another
 * user, an oversized file; mapped files replaced on disk; requests naming
 * paths outside the debug directories; root's private files beside a mapped
 * one. Each would make a root profiler read what the target could not, or
 * hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "process-maps.h"
#include "target-file-cache.h"
#include "target-files.h"
#include "test-util.h"
#include "unwind-harness.h"

#define TARGET_UID 65534
#define OTHER_UID 1234

static void kill_target(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * A child that runs setup(arg) as root (when given), drops to TARGET_UID and waits to be
 * killed; -1 when it could not.
 */
static pid_t spawn_target(int (*setup)(const char *arg), const char *arg)
{
	int pipefd[2];
	pid_t pid;
	char c;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		if ((setup && setup(arg) < 0) || setresgid(TARGET_UID, TARGET_UID, TARGET_UID) < 0 ||
		    setresuid(TARGET_UID, TARGET_UID, TARGET_UID) < 0 || write(pipefd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &c, 1) != 1) {
		kill_target(pid);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

/* spawn_target() setups: map a page of 'path'; live in the root 'path' */
static int map_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED ? -1 : 0;
}

static int enter_root(const char *path)
{
	return chroot(path) < 0 || chdir("/") < 0 ? -1 : 0;
}

static int open_kind(TargetFileKind kind, pid_t pid, uint64_t address, const char *name,
		     const TargetFilePolicy *policy)
{
	TargetFileRequest req = { .kind = kind, .pid = (uint32_t)pid, .address = address };

	if (name)
		snprintf(req.name, sizeof(req.name), "%s", name);
	return target_file_open(&req, (void *)policy);
}

static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return fd >= 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static void expect_error(int r, int error, const char *what)
{
	CHECK(r == error, "%s: got %s, expected %s", what, r >= 0 ? "a descriptor" : strerror(-r),
	      strerror(-error));
	if (r >= 0)
		close(r);
}

/* The perf map: only a regular file of the target's uid or root, not too big. */
static void test_perf_map(void)
{
	pid_t pid = spawn_target(NULL, NULL);
	char path[64];
	int fd;

	CHECK(pid > 0, "cannot start the target");
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	expect_error(open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL), -ENOENT, "no map");

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && fchown(fd, TARGET_UID, TARGET_UID) == 0, "create %s: %m", path);
	safe_close(fd);
	fd = open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL);
	CHECK(same_file(fd, path), "the target's own map is not served: %s",
	      fd < 0 ? strerror(-fd) : "another file");
	safe_close(fd);

	CHECK(chown(path, OTHER_UID, OTHER_UID) == 0, "chown: %m");
	expect_error(open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL), -EPERM,
		     "a map of another user");
	CHECK(chown(path, 0, 0) == 0, "chown: %m");
	fd = open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL);
	CHECK(fd >= 0, "a root-owned map refused: %s", strerror(-fd));
	safe_close(fd);

	CHECK(chown(path, TARGET_UID, TARGET_UID) == 0 && truncate(path, (off_t)(300ULL << 20)) == 0,
	      "grow: %m");
	expect_error(open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL), -EFBIG,
		     "a map over the size cap");

	/* a link to a file the target cannot read: never followed */
	unlink(path);
	CHECK(symlink("/etc/shadow", path) == 0 && lchown(path, TARGET_UID, TARGET_UID) == 0,
	      "symlink: %m");
	expect_error(open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL), -EPERM,
		     "a symlinked map");

	/* a FIFO nobody writes: refused at once, not waited on */
	unlink(path);
	CHECK(mkfifo(path, 0644) == 0 && chown(path, TARGET_UID, TARGET_UID) == 0, "mkfifo: %m");
	expect_error(open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL), -EPERM, "a FIFO map");
	unlink(path);
	kill_target(pid);
}

/* The start of the first mapping of 'path' in 'pid'. */
static uint64_t mapping_of(pid_t pid, const char *path)
{
	ProcessMaps *maps = NULL;
	uint64_t start = 0;

	if (process_maps_load((uint32_t)pid, &maps) < 0)
		return 0;
	for (size_t i = 0; i < maps->n_mappings && !start; i++)
		if (maps->mappings[i].path && strcmp(maps->mappings[i].path, path) == 0)
			start = maps->mappings[i].start;
	process_maps_free(maps);
	return start;
}

/*
 * A mapped file is served only as the file the target maps: a file put in
 * its place on disk is not it (the mapping's own file comes instead).
 */
static void test_mapped(const char *workload)
{
	char dir[] = "/tmp/profd-target-files-XXXXXX", exe[256], other[256];
	char *argv[] = { exe, (char *)"30", NULL };
	struct stat before;
	uint64_t start;
	pid_t pid;
	int fd;

	CHECK(mkdtemp(dir), "mkdtemp: %m");
	snprintf(exe, sizeof(exe), "%s/workload", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	CHECK(harness_copy_file(workload, exe, 0755) == 0 && stat(exe, &before) == 0, "copy: %m");
	pid = fork();
	if (pid == 0) {
		execv(exe, argv);
		_exit(127);
	}
	/* wait until it runs the new program, however long a loaded machine takes to exec it */
	CHECK(test_wait_started(pid, exe, 1), "%s never started", exe);
	start = mapping_of(pid, exe);
	CHECK(start, "%s never mapped", exe);

	fd = open_kind(TARGET_FILE_MAPPED, pid, start, NULL, NULL);
	CHECK(same_file(fd, exe), "the mapped file is not served: %s",
	      fd < 0 ? strerror(-fd) : "another file");
	safe_close(fd);
	expect_error(open_kind(TARGET_FILE_MAPPED, pid, 4096, NULL, NULL), -ENOENT,
		     "an address nothing maps");

	/* replaced on disk (an upgrade): still the file that runs */
	CHECK(harness_copy_file("/bin/true", other, 0755) == 0 && rename(other, exe) == 0, "replace: %m");
	fd = open_kind(TARGET_FILE_MAPPED, pid, start, NULL, NULL);
	{
		struct stat st;

		CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == before.st_ino &&
			      st.st_dev == before.st_dev,
		      "a replaced binary is served as the new file: %s",
		      fd < 0 ? strerror(-fd) : "other inode");
	}
	safe_close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(exe);
	rmdir(dir);
}

/*
 * A target that has exited: the cache serves the file it mapped (noted while
 * it ran) and debug files by the owner it had, but only for the identity the
 * request names; live opening fails.
 */
static void test_cache(const char *workload)
{
	char *argv[] = { (char *)workload, (char *)"30", NULL };
	TargetFileRequest req = { .kind = TARGET_FILE_MAPPED };
	TargetFileCache *cache = NULL;
	ProcessMaps *maps = NULL;
	const ProcessMapping *m = NULL;
	pid_t pid;
	int fd, r;

	r = harness_spawn(argv, &pid);
	CHECK(r >= 0, "spawn: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(target_file_cache_new((uint32_t)pid, NULL, &cache) == 0, "cache");
	CHECK(process_maps_load((uint32_t)pid, &maps) == 0, "maps");
	for (size_t i = 0; maps && i < maps->n_mappings && !m; i++)
		if (maps->mappings[i].path && strcmp(maps->mappings[i].path, workload) == 0 &&
		    (maps->mappings[i].prot & PROT_EXEC))
			m = &maps->mappings[i];
	CHECK(m, "%s not mapped", workload);
	if (!m || !cache) {
		harness_reap(pid);
		process_maps_free(maps);
		target_file_cache_free(cache);
		return;
	}
	CHECK(target_file_cache_note_mapping(cache, (uint32_t)pid, m) == 0, "note");
	kill(pid, SIGKILL);
	harness_reap(pid);

	req.pid = (uint32_t)pid;
	req.address = m->start;
	req.inode = m->inode;
	req.dev_major = m->dev_major;
	req.dev_minor = m->dev_minor;
	expect_error(target_file_open(&req, NULL), -ESRCH, "live opening of an exited target");
	fd = target_file_cache_open(&req, cache);
	CHECK(same_file(fd, workload), "the exited target's file is not served: %s",
	      fd < 0 ? strerror(-fd) : "another file");
	safe_close(fd);
	req.inode++;
	CHECK(target_file_cache_open(&req, cache) < 0, "a file of another identity served");
	process_maps_free(maps);
	target_file_cache_free(cache);
}

/*
 * Debug files beside a mapped file: root's files only if the target could read
 * them. A target may map any world-readable file, and root's secrets lie
 * beside some (/etc/shadow beside /etc/passwd).
 */
static void test_debuglink_readable(void)
{
	char dir[] = "/tmp/profd-target-files-XXXXXX", path[PATH_MAX];
	static const struct {
		const char *name;
		uid_t uid;
		mode_t mode;
		int error; /* 0: served */
	} files[] = {
		{ "public.debug", 0, 0644, 0 },
		{ "secret.debug", 0, 0600, -EPERM },
		{ "grouped.debug", 0, 0640, -EPERM },
		{ "own.debug", TARGET_UID, 0600, 0 },
	};
	int fd;
	uint64_t address;
	pid_t pid;

	CHECK(mkdtemp(dir) && chmod(dir, 0755) == 0, "mkdtemp: %m");
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, files[i].mode);
		CHECK(fd >= 0 && fchown(fd, files[i].uid, 0) == 0 && fchmod(fd, files[i].mode) == 0,
		      "create %s: %m", path);
		safe_close(fd);
	}
	/* the target maps the world-readable one, as it may map /etc/passwd */
	snprintf(path, sizeof(path), "%s/public.debug", dir);
	pid = spawn_target(map_file, path);
	CHECK(pid > 0, "cannot start the target");
	if (pid > 0) {
		address = mapping_of(pid, path);
		CHECK(address != 0, "the target does not map %s", path);
		for (size_t i = 0; address && i < ELEMENTSOF(files); i++) {
			fd = open_kind(TARGET_FILE_DEBUGLINK, pid, address, files[i].name, NULL);
			if (files[i].error)
				expect_error(fd, files[i].error, files[i].name);
			else
				CHECK(fd >= 0, "%s refused: %s", files[i].name, strerror(-fd));
			safe_close(fd);
		}
		kill_target(pid);
	}
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * A target's root is where its files are looked up, all the way: a chroot'd
 * target whose /tmp is an absolute symlink would otherwise lead profd to the
 * directory of that name in its own root.
 */
static void test_perf_map_in_root(void)
{
	char dir[] = "/tmp/profd-target-root-XXXXXX", jail[64], outside[64], link[80], path[128];
	int fd;
	pid_t pid;

	CHECK(mkdtemp(dir) && chmod(dir, 0755) == 0, "mkdtemp: %m");
	snprintf(jail, sizeof(jail), "%s/jail", dir);
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	CHECK(mkdir(jail, 0755) == 0 && mkdir(outside, 0755) == 0, "mkdir: %m");
	pid = spawn_target(enter_root, jail);
	CHECK(pid > 0, "cannot start the target");
	if (pid > 0) {
		/* its /tmp links to an absolute path, which names a map in our root */
		snprintf(link, sizeof(link), "%s/tmp", jail);
		CHECK(symlink(outside, link) == 0, "symlink: %m");
		snprintf(path, sizeof(path), "%s/perf-%d.map", outside, (int)pid);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		CHECK(fd >= 0, "create %s: %m", path);
		safe_close(fd);
		expect_error(open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL), -EPERM,
			     "a map through an absolute symlink in the target's root");

		/* its own /tmp: served */
		CHECK(unlink(link) == 0 && mkdir(link, 01777) == 0 && chmod(link, 01777) == 0,
		      "mkdir %s: %m", link);
		snprintf(path, sizeof(path), "%s/perf-%d.map", link, (int)pid);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		CHECK(fd >= 0, "create %s: %m", path);
		safe_close(fd);
		fd = open_kind(TARGET_FILE_PERF_MAP, pid, 0, NULL, NULL);
		CHECK(same_file(fd, path), "the chroot'd target's own map is not served: %s",
		      fd < 0 ? strerror(-fd) : "another file");
		safe_close(fd);
		kill_target(pid);
		unlink(path);
		rmdir(link);
		snprintf(path, sizeof(path), "%s/perf-%d.map", outside, (int)pid);
		unlink(path);
	}
	rmdir(outside);
	rmdir(jail);
	rmdir(dir);
}

/* Names in requests never escape where their kind points. */
static void test_names(void)
{
	const char *dirs[] = { "/usr/lib/debug", NULL };
	TargetFilePolicy policy = { .debug_dirs = dirs, .no_kernel_symbols = true };
	TargetFileRequest req = { .kind = TARGET_FILE_BUILD_ID, .pid = (uint32_t)getpid() };
	uint64_t text = (uint64_t)(uintptr_t)test_names;

	expect_error(open_kind(TARGET_FILE_DEBUGLINK, getpid(), text, "../../etc/shadow", NULL),
		     -EINVAL, "a debuglink with a path");
	expect_error(open_kind(TARGET_FILE_DEBUGLINK, getpid(), text, "..", NULL), -EINVAL,
		     "a debuglink of ..");
	expect_error(open_kind(TARGET_FILE_DEBUG_ALT, getpid(), 0, "/etc/passwd", &policy), -EPERM,
		     "an altlink outside the debug directories");
	expect_error(open_kind(TARGET_FILE_DEBUG_ALT, getpid(), 0, "/usr/lib/debug/../../etc/passwd",
			       &policy),
		     -EPERM, "an altlink climbing out with ..");
	expect_error(open_kind(TARGET_FILE_DEBUG_ALT, getpid(), 0, "relative.debug", &policy),
		     -EINVAL, "a relative altlink");
	expect_error(target_file_open(&req, &policy), -EINVAL, "an empty build-id");
	req.kind = _TARGET_FILE_KIND_MAX;
	expect_error(target_file_open(&req, &policy), -EINVAL, "an unknown kind");
	req.kind = TARGET_FILE_DEBUGLINK;
	memset(req.name, 'a', sizeof(req.name));
	expect_error(target_file_open(&req, &policy), -EINVAL, "a name without its NUL");
	expect_error(open_kind(TARGET_FILE_MAPPED, 0, text, NULL, NULL), -EINVAL, "pid 0");
	expect_error(open_kind(TARGET_FILE_KALLSYMS, 0, 0, NULL, &policy), -EPERM,
		     "kernel symbols for a caller without them");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test-target-files WORKLOAD\n");
		return 2;
	}
	test_perf_map();
	test_mapped(argv[1]);
	test_cache(argv[1]);
	test_names();
	test_debuglink_readable();
	test_perf_map_in_root();
	return test_result();
}
