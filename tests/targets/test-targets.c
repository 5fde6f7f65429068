/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-targets CASE: the Collector on targets beyond one pid — a cgroup, the
 * whole machine — and the bpf backend through it, against real workloads,
 * real cgroups and real perf events. Needs root (cgroups, system-wide events).
 * Workloads from the environment: WORKLOAD_SPLIT (no frame pointers),
 * WORKLOAD_SPLIT_FP (frame pointers), WORKLOAD_SYSCALLS.
 *
 *   cgroup            auto picks perf-dwarf: a cgroup with a process in it from the
 *                     start and one that moves in mid-session, a busy one outside:
 *                     both inside named (DWARF-unwound), nothing of the outside one,
 *                     folded stacks start with each one's process
 *   cgroup-admit      an admit rule that refuses one of two processes: its samples
 *                     are counted as excluded, none is kept
 *   cgroup-files      consumed elsewhere: a hostile consumer's file (and namespace pid)
 *                     requests are answered only for a process in the cgroup that the
 *                     admit rule lets in
 *   system            auto picks bpf for the whole machine: the workload's hot
 *                     function and at least two other processes, each with its
 *                     process frame; the collector's own process left out
 *   system-perf-dwarf perf-dwarf on the whole machine: the same, unwound with DWARF
 *   system-thread-exits perf-dwarf on the whole machine with kernel frames beside a
 *                     process whose threads start and exit without pause: samples of
 *                     threads the kernel released already (tid -1) neither fail the
 *                     session nor become a thread of their own
 *   pid-bpf           --backend=bpf on one process works through the Collector
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cgroup-fixture.h"
#include "cleanup.h"
#include "collector.h"
#include "export.h"
#include "profile-query.h"
#include "test-util.h"
#include "workload-process.h"

/* The folded export; every line must start with "comm-pid;": returns the distinct pids. */
static size_t folded_processes(const Profile *p, uint32_t *pids, size_t max)
{
	_cleanup_free_ char *text = NULL;
	size_t size = 0, n = 0;

	if (export_profile_to_memory(p, EXPORT_FOLDED, &text, &size) < 0)
		return 0;
	for (char *line = text, *next; line && *line; line = next) {
		char *semi = strchr(line, ';'), *dash;
		unsigned long pid;
		bool seen = false;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		dash = semi ? memrchr(line, '-', (size_t)(semi - line)) : NULL;
		if (!dash || sscanf(dash + 1, "%lu;", &pid) != 1) {
			CHECK(false, "folded line without a process frame: %s", line);
			continue;
		}
		for (size_t i = 0; i < n; i++)
			seen = seen || pids[i] == pid;
		if (!seen && n < max)
			pids[n++] = (uint32_t)pid;
	}
	return n;
}

typedef struct Run {
	Collector *collector;
	SamplingMetrics metrics;
	Profile *profile;
} Run;

static void run_done(Run *r)
{
	profile_free(r->profile);
	collector_free(r->collector);
}

static int run_start(Run *r, pid_t pid, const CollectorOptions *o)
{
	int k;

	*r = (Run){};
	k = collector_new(pid, o, &r->collector);
	if (k < 0) {
		fprintf(stderr, "collector_new: %s\n", strerror(-k));
		return k;
	}
	k = collector_start(r->collector);
	if (k < 0)
		fprintf(stderr, "collector_start: %s\n", strerror(-k));
	return k;
}

static void run_finish(Run *r)
{
	int k = collector_wait(r->collector);

	CHECK(k == 0, "collector: %s", strerror(-k));
	collector_get_metrics(r->collector, &r->metrics);
	print_metrics(&r->metrics);
	r->profile = collector_steal_profile(r->collector);
	if (!r->profile) {
		fprintf(stderr, "no profile\n");
		exit(EXIT_FAILURE);
	}
}

static void stop_collector(void *collector)
{
	collector_stop(collector);
}

static int test_cgroup(void)
{
	_cleanup_(cgroup_fixture_done) CgroupFixture cg = {};
	const char *split = env_path("WORKLOAD_SPLIT");
	SamplingTarget *target = NULL;
	/* 60 s: a hang guard, the late one's CPU time ends the window */
	CollectorOptions o = { .sampling = { .hz = 199, .duration_nanos = 60 * NSEC } };
	CgroupLateJoin join = { .cg = &cg, .path = split, .stop = stop_collector };
	pid_t inside, late, outside;
	uint32_t pids[16];
	size_t n;
	Run run;

	cgroup_fixture_new(&cg);
	inside = cgroup_fixture_spawn(&cg, split, "300", "1", NULL);
	outside = spawn(split, "300", "1", NULL);
	wait_threads(inside, 1, "workload-split");
	wait_threads(outside, 1, "workload-split");
	CHECK(sampling_target_new_cgroup(cg.name, &target) >= 0, "cgroup target %s", cg.name);
	if (!target)
		return test_result();
	o.sampling.target = target;
	if (run_start(&run, 0, &o) < 0)
		return EXIT_FAILURE;
	join.inside = inside;
	join.stop_arg = run.collector;
	cgroup_late_join_start(&join);
	run_finish(&run);
	late = cgroup_late_join_finish(&join); /* moved in mid-session */
	reap(inside);
	reap(late);
	reap(outside);

	printf("inside %d: %" PRIu64 " samples, late %d: %" PRIu64 ", outside %d: %" PRIu64 "\n",
	       (int)inside, count_samples(run.profile, (uint32_t)inside, NULL), (int)late,
	       count_samples(run.profile, (uint32_t)late, NULL), (int)outside,
	       count_samples(run.profile, (uint32_t)outside, NULL));
	CHECK(strcmp(run.metrics.backend, "perf-dwarf") == 0, "auto chose %s", run.metrics.backend);
	CHECK(run.metrics.backend_reason && strncmp(run.metrics.backend_reason, "auto", 4) == 0,
	      "reason %s", run.metrics.backend_reason ?: "(none)");
	CHECK(run.profile->multi_process && run.profile->pid == 0, "a multi-process profile");
	/* no frame pointers: only DWARF unwinding finds main and split_worker */
	CHECK(count_samples(run.profile, (uint32_t)inside, "split_worker") > 0, "inside named");
	CHECK(count_samples(run.profile, (uint32_t)late, "split_worker") > 0, "late process named");
	CHECK(count_samples(run.profile, (uint32_t)outside, NULL) == 0, "nothing of the outside one");
	CHECK(process_name(run.profile, (uint32_t)inside) &&
	      strcmp(process_name(run.profile, (uint32_t)inside), "workload-split") == 0,
	      "inside process name %s", process_name(run.profile, (uint32_t)inside) ?: "(none)");
	CHECK(process_name(run.profile, (uint32_t)late) &&
	      strcmp(process_name(run.profile, (uint32_t)late), "workload-split") == 0,
	      "late process name %s", process_name(run.profile, (uint32_t)late) ?: "(none)");
	CHECK(run.metrics.target && strncmp(run.metrics.target, "cgroup:", 7) == 0 &&
	      strcmp(run.metrics.target + 7, cg.name) == 0, "target %s", run.metrics.target);
	CHECK(run.metrics.processes_seen == 2, "processes seen %" PRIu64,
	      run.metrics.processes_seen);
	n = folded_processes(run.profile, pids, ELEMENTSOF(pids));
	CHECK(n == 2, "folded stacks of %zu processes", n);
	run_done(&run);
	sampling_target_free(target);
	return test_result();
}

/* Admit everything but the process named by 'userdata'. */
static bool admit_all_but(void *userdata, uint32_t pid)
{
	return pid != (uint32_t)*(const pid_t *)userdata;
}

/*
 * Two split workloads in a new cgroup, running; o's target is the cgroup (returned, NULL
 * on failure), admitting all but 'refused' (which must outlive the session).
 */
static SamplingTarget *cgroup_admit_start(CgroupFixture *cg, CollectorOptions *o,
					  pid_t *ret_allowed, pid_t *refused)
{
	const char *split = env_path("WORKLOAD_SPLIT");
	SamplingTarget *target = NULL;

	cgroup_fixture_new(cg);
	*ret_allowed = cgroup_fixture_spawn(cg, split, "300", "1", NULL);
	*refused = cgroup_fixture_spawn(cg, split, "300", "1", NULL);
	wait_threads(*ret_allowed, 1, "workload-split");
	wait_threads(*refused, 1, "workload-split");
	CHECK(sampling_target_new_cgroup(cg->name, &target) >= 0, "cgroup target %s", cg->name);
	o->sampling.target = target;
	o->sampling.admit = admit_all_but;
	o->sampling.admit_userdata = refused;
	return target;
}

static int test_cgroup_admit(void)
{
	_cleanup_(cgroup_fixture_done) CgroupFixture cg = {};
	SamplingTarget *target;
	/* 60 s: a hang guard; the window ends once the admitted one ran 0.2 s (~40 samples) */
	CollectorOptions o = { .sampling = { .hz = 199, .duration_nanos = 60 * NSEC } };
	CpuCall window = { .fn = stop_collector, .cpu.nanos = NSEC / 5 };
	pid_t allowed, refused;
	Run run;

	target = cgroup_admit_start(&cg, &o, &allowed, &refused);
	if (!target)
		return test_result();
	if (run_start(&run, 0, &o) < 0)
		return EXIT_FAILURE;
	window.arg = run.collector;
	window.cpu.pid = allowed;
	cpu_call_start(&window);
	run_finish(&run);
	cpu_call_join(&window);
	reap(allowed);
	reap(refused);

	CHECK(count_samples(run.profile, (uint32_t)allowed, NULL) > 0, "the admitted process");
	CHECK(count_samples(run.profile, (uint32_t)refused, NULL) == 0, "samples of the refused one");
	CHECK(run.metrics.processes_excluded == 1, "processes excluded %" PRIu64,
	      run.metrics.processes_excluded);
	CHECK(run.metrics.samples_excluded > 0, "its samples counted: %" PRIu64,
	      run.metrics.samples_excluded);
	run_done(&run);
	sampling_target_free(target);
	return test_result();
}

/* A request for the file process 'pid' maps its executable from, as a consumer would send it. */
static TargetFileRequest executable_request(pid_t pid)
{
	TargetFileRequest req = { .kind = TARGET_FILE_MAPPED, .pid = (uint32_t)pid };
	ProcessMaps *maps = NULL;

	CHECK(process_maps_load((uint32_t)pid, &maps) >= 0, "maps of %d", (int)pid);
	for (size_t i = 0; maps && i < maps->n_mappings && !req.address; i++)
		if (maps->mappings[i].path && strstr(maps->mappings[i].path, "workload-split")) {
			req.address = maps->mappings[i].start;
			req.inode = maps->mappings[i].inode;
			req.dev_major = maps->mappings[i].dev_major;
			req.dev_minor = maps->mappings[i].dev_minor;
		}
	CHECK(req.address != 0, "the executable's mapping in process %d", (int)pid);
	process_maps_free(maps);
	return req;
}

/* A BUILD_ID request for one of the system's debug files (root's: libc6-dbg's, say). */
static bool system_debug_file(TargetFileRequest *ret)
{
	_cleanup_(closedirp) DIR *top = NULL;
	struct dirent *de, *fe;

	top = opendir("/usr/lib/debug/.build-id");
	while (top && (de = readdir(top))) {
		_cleanup_(closedirp) DIR *sub = NULL;
		char dir[300];

		if (strlen(de->d_name) != 2 || !isxdigit(de->d_name[0]) || !isxdigit(de->d_name[1]))
			continue;
		snprintf(dir, sizeof(dir), "/usr/lib/debug/.build-id/%s", de->d_name);
		sub = opendir(dir);
		while (sub && (fe = readdir(sub))) {
			char hex[2 * TARGET_FILE_BUILD_ID_MAX + 1], path[600];
			size_t n = strlen(fe->d_name);
			struct stat st;

			if (n <= 6 || n - 6 > 2 * TARGET_FILE_BUILD_ID_MAX - 2 ||
			    strcmp(fe->d_name + n - 6, ".debug") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, fe->d_name);
			if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0)
				continue; /* symlinks to the .debug files are not followed */
			snprintf(hex, sizeof(hex), "%s%.*s", de->d_name, (int)(n - 6), fe->d_name);
			*ret = (TargetFileRequest){ .kind = TARGET_FILE_BUILD_ID,
						    .build_id_size = (uint32_t)strlen(hex) / 2 };
			for (size_t i = 0; i < ret->build_id_size; i++)
				sscanf(hex + 2 * i, "%2hhx", &ret->build_id[i]);
			return true;
		}
	}
	return false;
}

/* Has the collector drained samples (so the records before them too)? */
static bool sampled(void *userdata)
{
	SamplingMetrics m;

	collector_get_metrics(userdata, &m);
	return m.samples_captured > 0;
}

/* What collector_open_target_file() gave: the errno, or 0 for a descriptor (closed). */
static int open_result(Collector *c, const TargetFileRequest *req)
{
	int fd = collector_open_target_file(c, req);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

/*
 * A cgroup's records consumed elsewhere (the sandboxed unwinder, untrusted):
 * the files of a process are handed out only while it is in the cgroup and
 * passes the admit rule, whatever pid, kind or address a hostile consumer puts
 * in its requests.
 */
static int test_cgroup_files(void)
{
	_cleanup_(cgroup_fixture_done) CgroupFixture cg = {};
	const char *split = env_path("WORKLOAD_SPLIT");
	SamplingTarget *target;
	CollectorOptions o = { .sampling = { .hz = 99, .duration_nanos = 60 * NSEC },
			       .unwind_elsewhere = true };
	TargetFileRequest req;
	pid_t allowed, refused, outside;
	uint32_t ns_pid = 0;
	Collector *c = NULL;
	int k;

	outside = spawn(split, "300", "1", NULL);
	wait_threads(outside, 1, "workload-split");
	target = cgroup_admit_start(&cg, &o, &allowed, &refused);
	if (!target)
		return test_result();
	k = collector_new(0, &o, &c);
	CHECK(k >= 0, "a cgroup collector consumed elsewhere: %s", strerror(-k));
	if (k < 0)
		return test_result();

	req = executable_request(allowed);
	k = open_result(c, &req);
	CHECK(k == 0, "the admitted process's executable: %s", strerror(-k));
	req = executable_request(refused);
	k = open_result(c, &req);
	CHECK(k == -EPERM, "the refused process's executable: %s", strerror(-k));
	req = executable_request(outside);
	k = open_result(c, &req);
	CHECK(k == -EPERM, "the executable of a process outside the cgroup: %s", strerror(-k));
	req.kind = TARGET_FILE_PERF_MAP;
	k = open_result(c, &req);
	CHECK(k == -EPERM, "the perf map of a process outside the cgroup: %s", strerror(-k));
	req = (TargetFileRequest){ .kind = TARGET_FILE_PERF_MAP, .pid = 1 };
	k = open_result(c, &req);
	CHECK(k == -EPERM, "pid 1's perf map: %s", strerror(-k));
	req = (TargetFileRequest){ .kind = TARGET_FILE_PERF_MAP, .pid = 0 };
	k = open_result(c, &req);
	CHECK(k == -EPERM, "a perf map of pid 0: %s", strerror(-k));
	req = (TargetFileRequest){ .kind = TARGET_FILE_KALLSYMS, .pid = (uint32_t)allowed };
	k = open_result(c, &req);
	CHECK(k == -EPERM, "kernel symbols asked with a pid: %s", strerror(-k));
	req = executable_request(allowed);
	req.kind = _TARGET_FILE_KIND_MAX + 7;
	k = open_result(c, &req);
	CHECK(k == -EINVAL, "an unknown kind: %s", strerror(-k));
	req = executable_request(allowed);
	req.inode ^= 1;
	k = open_result(c, &req);
	CHECK(k < 0, "another file than the one mapped there: %s", strerror(-k));
	req = executable_request(allowed);
	req.pid = 0x80000001U;
	k = open_result(c, &req);
	CHECK(k == -EPERM, "a pid out of range: %s", strerror(-k));

	/* the pid a process knows itself by: the same questions, the same answers */
	k = collector_namespace_pid(c, (uint32_t)allowed, &ns_pid);
	CHECK(k == 0 && ns_pid == (uint32_t)allowed, "the admitted process's namespace pid: %s, %u",
	      strerror(-k), ns_pid);
	k = collector_namespace_pid(c, (uint32_t)refused, &ns_pid);
	CHECK(k == -EPERM, "the refused process's namespace pid: %s", strerror(-k));
	k = collector_namespace_pid(c, (uint32_t)outside, &ns_pid);
	CHECK(k == -EPERM, "the namespace pid of a process outside the cgroup: %s", strerror(-k));
	k = collector_namespace_pid(c, 0, &ns_pid);
	CHECK(k == -EPERM, "the namespace pid of pid 0: %s", strerror(-k));

	/* a process gone before the consumer asks: the file its records mapped, only that one */
	k = collector_start(c);
	CHECK(k == 0, "collector_start: %s", strerror(-k));
	CHECK(test_wait_until(60, sampled, c), "no samples of the cgroup");
	req = executable_request(allowed);
	reap(allowed);
	reap(refused);
	k = open_result(c, &req);
	CHECK(k == 0, "the executable of the admitted process, gone: %s", strerror(-k));
	req.inode ^= 1;
	k = open_result(c, &req);
	CHECK(k < 0, "another file than the one it mapped, gone: %s", strerror(-k));
	req = executable_request(outside);
	req.pid = (uint32_t)refused; /* its records never came */
	k = open_result(c, &req);
	CHECK(k < 0, "the executable of the refused process, gone: %s", strerror(-k));
	/* root's debug files by build-id, for a process of the session only */
	CHECK(system_debug_file(&req), "no debug file under /usr/lib/debug/.build-id");
	req.pid = (uint32_t)allowed;
	k = open_result(c, &req);
	CHECK(k == 0, "a debug file by build-id for the admitted process, gone: %s", strerror(-k));
	req.pid = (uint32_t)refused;
	k = open_result(c, &req);
	CHECK(k < 0, "a debug file by build-id for the refused process, gone: %s", strerror(-k));

	collector_free(c);
	reap(outside);
	sampling_target_free(target);
	return test_result();
}

static bool unrecorded_sampled(void *userdata)
{
	SamplingMetrics m;

	collector_get_metrics(userdata, &m);
	return m.samples_unrecorded > 0;
}

/* The device and inode of the C library this test runs with (the shell maps it too). */
static void libc_request(pid_t pid, TargetFileRequest *ret)
{
	Dl_info info = {};
	struct stat st;

	/* a function no sanitizer intercepts: its address is the C library's own */
	CHECK(dladdr((void *)gnu_get_libc_version, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0,
	      "the C library's file");
	*ret = (TargetFileRequest){ .kind = TARGET_FILE_MAPPED, .pid = (uint32_t)pid,
				    .address = (uint64_t)(uintptr_t)info.dli_fbase,
				    .inode = st.st_ino, .dev_major = major(st.st_dev),
				    .dev_minor = minor(st.st_dev) };
}

typedef struct UnrecordedSince {
	Collector *collector;
	uint64_t samples; /* samples_unrecorded before */
} UnrecordedSince;

/* More samples of processes past the cap drained (and so the records before them). */
static bool unrecorded_sampled_since(void *userdata)
{
	const UnrecordedSince *u = userdata;
	SamplingMetrics m;

	collector_get_metrics(u->collector, &m);
	return m.samples_unrecorded > u->samples;
}

/* The busy process's pid, once the shell wrote it. */
static bool pid_written(void *userdata)
{
	const char *path = userdata;
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	int pid = 0;

	return f && fscanf(f, "%d", &pid) == 1 && pid > 0;
}

/*
 * A cgroup consumed elsewhere keeps the mappings of so many processes for
 * when they are gone (here 64, a loaded machine forks slowly); one that starts
 * 200 short-lived ones and then a busy one: the processes past the cap are
 * counted, and the busy one's samples, which a consumer may not be able to
 * name once it is gone, as theirs. Once it is gone, a file it shared with a
 * recorded process (the C library the shell mapped) is still handed over, one
 * that no recorded process mapped (its own executable) is not.
 */
static int test_cgroup_many(void)
{
	_cleanup_(cgroup_fixture_done) CgroupFixture cg = {};
	const char *split = env_path("WORKLOAD_SPLIT");
	char pid_file[] = "/tmp/profd-test-busy.XXXXXX";
	SamplingTarget *target = NULL;
	CollectorOptions o = { .sampling = { .hz = 199, .duration_nanos = 60 * NSEC },
			       .unwind_elsewhere = true, .max_recorded_processes = 64 };
	TargetFileRequest req;
	SamplingMetrics m;
	Collector *c = NULL;
	struct stat st;
	pid_t shell;
	int busy = 0, fd, k;
	FILE *f;

	cgroup_fixture_new(&cg);
	CHECK(sampling_target_new_cgroup(cg.name, &target) >= 0, "cgroup target %s", cg.name);
	fd = mkstemp(pid_file);
	CHECK(fd >= 0, "a file for the busy process's pid");
	if (!target || fd < 0)
		return test_result();
	close(fd);
	o.sampling.target = target;
	k = collector_new(0, &o, &c);
	if (k >= 0)
		k = collector_start(c);
	CHECK(k >= 0, "a cgroup collector consumed elsewhere: %s", strerror(-k));
	if (k < 0)
		return test_result();
	shell = cgroup_fixture_spawn(&cg, "/bin/bash", "-c",
				     "for ((i = 0; i < 200; i++)); do (:); done; "
				     "\"$0\" 300 1 & echo $! >\"$1\"; wait",
				     split, pid_file, NULL);
	CHECK(test_wait_until(120, unrecorded_sampled, c), "no sample of a process past the cap");
	CHECK(test_wait_until(30, pid_written, pid_file), "the busy process's pid");
	f = fopen(pid_file, "re");
	if (f) {
		(void)fscanf(f, "%d", &busy);
		fclose(f);
	}
	(void)unlink(pid_file);
	/* the only one running now: a sample of it drained, its records were too */
	collector_get_metrics(c, &m);
	CHECK(test_wait_until(60, unrecorded_sampled_since,
			      &(UnrecordedSince){ c, m.samples_unrecorded }),
	      "no sample of the busy process");
	/* gone: the shell waited for it */
	if (busy > 0)
		kill(busy, SIGKILL);
	reap_exited(shell);
	libc_request(busy, &req);
	k = open_result(c, &req);
	CHECK(k == 0, "the C library of process %d, past the cap and gone: %s", busy, strerror(-k));
	CHECK(stat(split, &st) == 0, "stat %s", split);
	req.inode = st.st_ino;
	req.dev_major = major(st.st_dev);
	req.dev_minor = minor(st.st_dev);
	k = open_result(c, &req);
	CHECK(k == -ESRCH, "its own executable, which no recorded process mapped: %s", strerror(-k));
	collector_stop(c);
	k = collector_consumer_done(c, &(ProfileBuilderStats){ 0 }, 0, false, 0, 0);
	CHECK(k == 0, "consumer_done: %s", strerror(-k));
	CHECK(collector_wait(c) == 0, "collector_wait");
	collector_get_metrics(c, &m);
	print_metrics(&m);
	/* 200 + the shell + the busy one, less the 64 kept */
	CHECK(m.processes_unrecorded >= 1 && m.processes_unrecorded <= 202 - 64,
	      "%" PRIu64 " processes unrecorded", m.processes_unrecorded);
	CHECK(m.samples_unrecorded >= 1, "%" PRIu64 " samples unrecorded", m.samples_unrecorded);
	collector_free(c);
	sampling_target_free(target);
	return test_result();
}

/*
 * An idle machine may run nothing but the two workloads: both of them, each under
 * its own process, is what shows every process is covered.
 */
static void check_system(const Run *run, const pid_t workloads[2], const char *hot)
{
	uint32_t pids[256];
	size_t n, seen = 0;

	n = folded_processes(run->profile, pids, ELEMENTSOF(pids));
	for (size_t i = 0; i < n; i++)
		seen += pids[i] == (uint32_t)workloads[0] || pids[i] == (uint32_t)workloads[1];
	printf("%zu processes in the folded stacks\n", n);
	CHECK(count_samples(run->profile, (uint32_t)workloads[0], hot) > 0, "the workload's %s", hot);
	CHECK(count_samples(run->profile, (uint32_t)workloads[1], NULL) > 0, "the syscalls workload");
	CHECK(seen == 2, "folded stacks of both workloads: %zu", seen);
	CHECK(count_samples(run->profile, (uint32_t)getpid(), NULL) == 0, "the collector's own process");
	CHECK(run->metrics.target && strcmp(run->metrics.target, "system") == 0, "target %s",
	      run->metrics.target ?: "(none)");
}

/* The whole machine for 3 s with 'backend' (NULL: auto), a busy workload and a syscall-heavy one. */
static void run_system(const char *backend, const char *workload, Run *run, pid_t ret_workloads[2])
{
	/* they outlive the window however long a loaded machine takes to start it */
	pid_t split = spawn(workload, "300", "1", NULL);
	pid_t sys = spawn(env_path("WORKLOAD_SYSCALLS"), "300", NULL);
	CollectorOptions o = {
		.sampling = { .hz = 99, .duration_nanos = 3 * NSEC, .backend = backend },
	};
	SamplingTarget *target = NULL;

	wait_threads(split, 1, "workload-split");
	wait_threads(sys, 1, "workload-syscalls");
	if (sampling_target_new_system(NULL, 0, &target) < 0)
		exit(EXIT_FAILURE);
	o.sampling.target = target;
	if (run_start(run, 0, &o) < 0)
		exit(EXIT_FAILURE);
	run_finish(run);
	reap(split);
	reap(sys);
	sampling_target_free(target);
	ret_workloads[0] = split;
	ret_workloads[1] = sys;
}

static int test_system(void)
{
	pid_t workloads[2];
	Run run;

	run_system(NULL, env_path("WORKLOAD_SPLIT_FP"), &run, workloads);
	CHECK(strcmp(run.metrics.backend, "bpf") == 0, "auto chose %s", run.metrics.backend);
	CHECK(run.metrics.backend_reason && strstr(run.metrics.backend_reason, "whole machine"),
	      "reason %s", run.metrics.backend_reason ?: "(none)");
	CHECK(run.profile->untimed, "bpf keeps no times");
	check_system(&run, workloads, "split_heavy");
	run_done(&run);
	return test_result();
}

static int test_system_perf_dwarf(void)
{
	pid_t workloads[2];
	Run run;

	run_system("perf-dwarf", env_path("WORKLOAD_SPLIT"), &run, workloads);
	CHECK(strcmp(run.metrics.backend, "perf-dwarf") == 0, "backend %s", run.metrics.backend);
	CHECK(!run.profile->untimed, "perf samples have times");
	/* no frame pointers: split_worker only through DWARF */
	check_system(&run, workloads, "split_worker");
	run_done(&run);
	return test_result();
}

/* A little work, then the thread exits (its result read, so the loop stays). */
static void *short_thread(void *arg)
{
	volatile unsigned long sum = 0;

	for (unsigned i = 0; i < 20000; i++)
		sum += i;
	return sum > 0 ? arg : NULL;
}

/* A child whose threads start and exit until it is killed. */
static pid_t spawn_thread_churn(void)
{
	pid_t pid = fork();

	if (pid < 0)
		exit(EXIT_FAILURE);
	if (pid > 0)
		return pid;
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* not left behind by a test that dies */
	for (;;) {
		pthread_t t[8];

		for (size_t i = 0; i < ELEMENTSOF(t); i++)
			if (pthread_create(&t[i], NULL, short_thread, NULL) != 0)
				_exit(EXIT_FAILURE);
		for (size_t i = 0; i < ELEMENTSOF(t); i++)
			pthread_join(t[i], NULL);
	}
}

static int test_system_thread_exits(void)
{
	pid_t churn = spawn_thread_churn();
	CollectorOptions o = {
		/* kernel frames: a released thread is sampled in its exit, inside the kernel */
		.sampling = { .hz = 999, .duration_nanos = 3 * NSEC, .backend = "perf-dwarf" },
	};
	SamplingTarget *target = NULL;
	uint64_t released = 0;
	Run run;

	if (sampling_target_new_system(NULL, 0, &target) < 0)
		return EXIT_FAILURE;
	o.sampling.target = target;
	if (run_start(&run, 0, &o) < 0)
		return EXIT_FAILURE;
	run_finish(&run); /* checks that it did not fail */
	reap(churn);
	for (size_t i = 0; i < run.profile->n_samples; i++)
		released += run.profile->samples[i].tid == 0 || run.profile->samples[i].tid == UINT32_MAX;
	CHECK(count_samples(run.profile, (uint32_t)churn, NULL) > 0, "samples of the churning process");
	CHECK(released == 0, "%" PRIu64 " samples of a thread 0 or -1", released);
	run_done(&run);
	sampling_target_free(target);
	return test_result();
}

static int test_pid_bpf(void)
{
	/* outlives the window however long a loaded machine takes to start it */
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT_FP"), "300", "2", NULL);
	CollectorOptions o = {
		.sampling = { .hz = 199, .duration_nanos = 2 * NSEC, .backend = "bpf" },
	};
	Run run;

	wait_threads(pid, 2, "workload-split-fp");
	if (run_start(&run, pid, &o) < 0)
		return EXIT_FAILURE;
	run_finish(&run);
	reap(pid);
	CHECK(strcmp(run.metrics.backend, "bpf") == 0, "backend %s", run.metrics.backend);
	CHECK(strcmp(run.metrics.backend_reason, "requested") == 0, "reason %s",
	      run.metrics.backend_reason);
	CHECK(run.profile->pid == (uint32_t)pid && !run.profile->multi_process, "one process");
	CHECK(count_samples(run.profile, 0, "split_heavy") > 0, "split_heavy named");
	CHECK(run.metrics.samples_captured == run.profile->n_samples, "captured %" PRIu64 " vs %zu",
	      run.metrics.samples_captured, run.profile->n_samples);
	CHECK(run.metrics.threads_seen == 2, "threads %" PRIu64, run.metrics.threads_seen);
	run_done(&run);
	return test_result();
}

int main(int argc, char **argv)
{
	static const TestCase cases[] = {
		{ "cgroup", test_cgroup },
		{ "cgroup-admit", test_cgroup_admit },
		{ "cgroup-files", test_cgroup_files },
		{ "cgroup-many", test_cgroup_many },
		{ "system", test_system },
		{ "system-perf-dwarf", test_system_perf_dwarf },
		{ "system-thread-exits", test_system_thread_exits },
		{ "pid-bpf", test_pid_bpf },
	};

	return test_run_case(argc, argv, cases, ELEMENTSOF(cases));
}
