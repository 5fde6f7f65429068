/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-bpf-profile WORKLOAD MODE: load the profile.bpf.c skeleton, attach it to
 * a cpu-clock perf event on every CPU and run WORKLOAD (workload-split) as the
 * target process. Needs root.
 *
 * Modes:
 *   count          the target's samples are counted with valid user stacks
 *                  whose leaf ip lies in the workload's text, only the target
 *                  is counted, and both its threads are seen
 *   foreign-tgid   a target tgid no process can have (in the `tgids` set): the
 *                  program runs but counts nothing
 *   load-failure   a map the kernel refuses: load fails with a negative errno
 *                  and libbpf's message names the map
 *   stacks-full    a `stacks` map of 1 entry: samples keep counting, the stacks
 *                  that did not fit are flagged lost and counted
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cleanup.h"
#include "profile-bpf.h"
#include "profile.skel.h"

#define SAMPLE_HZ 999
#define MAX_TEXT_RANGES 8
#define MAX_TIDS 64

DEFINE_TRIVIAL_CLEANUP_FUNC(struct profile_bpf *, profile_bpf__destroy);

/* libbpf's warnings, kept so a test can check what a failed load said. */
static char libbpf_messages[8192];

_printf_(2, 0) static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t used = strlen(libbpf_messages);
	va_list copy;

	if (level == LIBBPF_DEBUG)
		return 0;
	va_copy(copy, ap);
	vsnprintf(libbpf_messages + used, sizeof(libbpf_messages) - used, fmt, copy);
	va_end(copy);
	return vfprintf(stderr, fmt, ap);
}

/* One attached perf event per CPU; each link owns its perf event fd. */
typedef struct CpuLinks {
	struct bpf_link **links;
	size_t n_links;
} CpuLinks;

static void cpu_links_done(CpuLinks *c)
{
	for (size_t i = 0; i < c->n_links; i++)
		bpf_link__destroy(c->links[i]);
	free(c->links);
	*c = (CpuLinks) {};
}

static int perf_event_open_cpu_clock(int cpu, unsigned hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
	};
	int fd;

	fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? negative_errno() : fd;
}

static int attach_every_cpu(struct bpf_program *prog, unsigned hz, CpuLinks *ret)
{
	_cleanup_(cpu_links_done) CpuLinks c = {};
	int n_cpus = libbpf_num_possible_cpus();

	if (n_cpus < 0) {
		fprintf(stderr, "cannot count possible cpus: %s\n", strerror(-n_cpus));
		return n_cpus;
	}
	c.links = calloc((size_t)n_cpus, sizeof(*c.links));
	if (!c.links)
		return -ENOMEM;

	for (int cpu = 0; cpu < n_cpus; cpu++) {
		_cleanup_close_ int fd = -EBADF;
		struct bpf_link *link;

		fd = perf_event_open_cpu_clock(cpu, hz);
		if (fd == -ENODEV)
			continue; /* possible but offline */
		if (fd < 0) {
			fprintf(stderr, "cannot open perf event cpu-clock on cpu %d: %s\n", cpu,
				strerror(-fd));
			return fd;
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			int r = negative_errno();

			fprintf(stderr, "cannot attach bpf program to cpu-clock on cpu %d: %s\n", cpu,
				strerror(-r));
			return r;
		}
		TAKE_FD(fd);
		c.links[c.n_links++] = link;
	}
	if (c.n_links == 0) {
		fprintf(stderr, "cannot attach bpf program: no cpu is online\n");
		return -ENODEV;
	}
	*ret = c;
	c = (CpuLinks) {};
	return 0;
}

/* Fork a child that execs argv[0] only once *ret_go is written; closing it unwritten kills the child. */
static int spawn_held(char *const argv[], pid_t *ret_pid, int *ret_go)
{
	int p[2];
	pid_t pid = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return negative_errno();
	pid = fork();
	if (pid < 0) {
		int r = negative_errno();

		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		char go;

		close(p[1]);
		if (read(p[0], &go, 1) != 1)
			_exit(127);
		execv(argv[0], argv);
		fprintf(stderr, "cannot execute '%s': %m\n", argv[0]);
		_exit(127);
	}
	close(p[0]);
	*ret_pid = pid;
	*ret_go = p[1];
	return 0;
}

/* Reap pid; its CPU time (user + system) in *ret_cpu_nanos. */
static int wait_exited_cleanly(pid_t pid, uint64_t *ret_cpu_nanos)
{
	struct rusage ru;
	int status;

	if (wait4(pid, &status, 0, &ru) < 0)
		return negative_errno();
	*ret_cpu_nanos = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
			 (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

typedef struct TextRanges {
	uint64_t start[MAX_TEXT_RANGES];
	uint64_t end[MAX_TEXT_RANGES];
	size_t n;
} TextRanges;

static bool text_ranges_contain(const TextRanges *t, uint64_t ip)
{
	for (size_t i = 0; i < t->n; i++)
		if (ip >= t->start[i] && ip < t->end[i])
			return true;
	return false;
}

/* The executable mappings of `path` in pid's address space, once pid has exec'ed it. */
static int read_text_ranges(pid_t pid, const char *path, TextRanges *ret)
{
	TextRanges t = {};
	char maps[64], line[PATH_MAX + 128];

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	for (int attempt = 0; attempt < 200 && t.n == 0; attempt++) {
		_cleanup_fclose_ FILE *f = fopen(maps, "re");

		if (!f)
			return negative_errno();
		while (fgets(line, sizeof(line), f) && t.n < MAX_TEXT_RANGES) {
			unsigned long long start, end;
			char perms[5], file[PATH_MAX];

			if (sscanf(line, "%llx-%llx %4s %*s %*s %*s %4095s", &start, &end, perms,
				   file) != 4)
				continue;
			if (perms[2] != 'x' || strcmp(file, path) != 0)
				continue;
			t.start[t.n] = start;
			t.end[t.n] = end;
			t.n++;
		}
		if (t.n == 0)
			nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	if (t.n == 0)
		return -ENOENT;
	*ret = t;
	return 0;
}

typedef struct Tally {
	uint64_t samples;             /* all counts in the map */
	uint64_t foreign_samples;     /* counted for a tgid other than the target */
	uint64_t user_stacks;         /* samples with a user stack */
	uint64_t lost_user_stacks;    /* ... whose stack `stacks` could not hold instead */
	uint64_t leaf_in_text;        /* ... whose leaf ip is in the workload's text */
	uint64_t kernel_stacks;       /* samples with a kernel stack */
	uint64_t bad_kernel_leaves;   /* ... whose leaf ip is not a kernel address */
	uint64_t missing_stacks;      /* stack hashes absent from `stacks` */
	uint32_t tids[MAX_TIDS];
	size_t n_tids;
} Tally;

static void tally_tid(Tally *t, uint32_t tid)
{
	for (size_t i = 0; i < t->n_tids; i++)
		if (t->tids[i] == tid)
			return;
	if (t->n_tids < MAX_TIDS)
		t->tids[t->n_tids++] = tid;
}

static int stack_leaf(const struct profile_bpf *skel, uint64_t hash, uint64_t *ret)
{
	ProfileBpfStack stack;
	int r;

	r = bpf_map__lookup_elem(skel->maps.stacks, &hash, sizeof(hash), &stack, sizeof(stack), 0);
	if (r < 0)
		return r;
	*ret = stack.ips[0];
	return 0;
}

static void tally_bucket(const struct profile_bpf *skel, uint32_t target, const TextRanges *text,
			 const ProfileBpfKey *k, uint64_t n, Tally *t)
{
	uint64_t leaf;

	t->samples += n;
	if (k->tgid != target) {
		t->foreign_samples += n;
		return;
	}
	tally_tid(t, k->tid);
	if (k->user_stack) {
		if (stack_leaf(skel, k->user_stack, &leaf) < 0)
			t->missing_stacks += n;
		else {
			t->user_stacks += n;
			if (text_ranges_contain(text, leaf))
				t->leaf_in_text += n;
		}
	} else if (k->lost & PROFILE_BPF_LOST_USER)
		t->lost_user_stacks += n;
	if (k->kernel_stack) {
		if (stack_leaf(skel, k->kernel_stack, &leaf) < 0)
			t->missing_stacks += n;
		else {
			t->kernel_stacks += n;
			if (leaf < UINT64_C(0x8000000000000000))
				t->bad_kernel_leaves += n;
		}
	}
}

static int tally_counts(const struct profile_bpf *skel, uint32_t target, const TextRanges *text,
			Tally *ret)
{
	Tally t = {};
	ProfileBpfKey key, prev;
	bool first = true;
	int r;

	for (;;) {
		uint64_t n;

		r = bpf_map__get_next_key(skel->maps.counts, first ? NULL : &prev, &key, sizeof(key));
		if (r == -ENOENT)
			break;
		if (r < 0)
			return r;
		r = bpf_map__lookup_elem(skel->maps.counts, &key, sizeof(key), &n, sizeof(n), 0);
		if (r < 0)
			return r;
		tally_bucket(skel, target, text, &key, n, &t);
		prev = key;
		first = false;
	}
	*ret = t;
	return 0;
}

typedef struct ProgRuns {
	uint64_t count;
	uint64_t nanos;
} ProgRuns;

static int prog_runs(const struct bpf_program *prog, ProgRuns *ret)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) < 0)
		return negative_errno();
	*ret = (ProgRuns) { .count = info.run_cnt, .nanos = info.run_time_ns };
	return 0;
}

/*
 * Profile one run of the workload with `tgid` the only entry of `tgids` (0: the
 * workload itself) and `stacks` of 'max_stacks' entries (0: the default); the CPU
 * time the workload used, all of it sampled, in *ret_cpu_nanos.
 */
static int profile_workload(const char *workload, uint32_t tgid, uint32_t max_stacks,
			    Tally *ret_tally, ProgRuns *ret_runs, struct profile_bpf__bss *ret_bss,
			    uint64_t *ret_cpu_nanos)
{
	_cleanup_(profile_bpf__destroyp) struct profile_bpf *skel = NULL;
	_cleanup_(cpu_links_done) CpuLinks links = {};
	_cleanup_close_ int go = -EBADF, stats = -EBADF;
	char *argv[] = { (char *)workload, (char *)"1.5", (char *)"2", NULL };
	TextRanges text = {};
	ProgRuns runs = {};
	uint32_t target;
	uint8_t one = 1;
	pid_t pid = 0;
	int r;

	r = spawn_held(argv, &pid, &go);
	if (r < 0) {
		fprintf(stderr, "cannot start '%s': %s\n", workload, strerror(-r));
		return r;
	}

	skel = profile_bpf__open();
	if (!skel) {
		r = negative_errno();
		fprintf(stderr, "cannot open bpf skeleton 'profile_bpf': %s\n", strerror(-r));
		return r;
	}
	if (max_stacks)
		(void)bpf_map__set_max_entries(skel->maps.stacks, max_stacks);
	r = profile_bpf__load(skel);
	if (r < 0) {
		fprintf(stderr, "cannot load bpf skeleton 'profile_bpf': %s\n", strerror(-r));
		return r;
	}
	target = tgid ? tgid : (uint32_t)pid;
	r = bpf_map__update_elem(skel->maps.tgids, &target, sizeof(target), &one, sizeof(one),
				 BPF_ANY);
	if (r < 0) {
		fprintf(stderr, "cannot add tgid %u to bpf map 'tgids': %s\n", target, strerror(-r));
		return r;
	}
	/* Lets the kernel count program runs, so "ran but counted nothing" is provable. */
	stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats < 0) {
		r = stats;
		fprintf(stderr, "cannot enable bpf run statistics: %s\n", strerror(-r));
		return r;
	}
	r = attach_every_cpu(skel->progs.profile_sample, SAMPLE_HZ, &links);
	if (r < 0)
		return r;

	if (write(go, "x", 1) != 1) {
		r = negative_errno();
		fprintf(stderr, "cannot release workload pid %d: %s\n", (int)pid, strerror(-r));
		return r;
	}
	r = read_text_ranges(pid, workload, &text);
	if (r < 0)
		fprintf(stderr, "cannot find text of '%s' in pid %d: %s\n", workload, (int)pid,
			strerror(-r));
	if (wait_exited_cleanly(pid, ret_cpu_nanos) < 0) {
		fprintf(stderr, "workload '%s' did not exit cleanly\n", workload);
		return -ECHILD;
	}
	if (r < 0)
		return r;
	cpu_links_done(&links);

	r = tally_counts(skel, target, &text, ret_tally);
	if (r < 0) {
		fprintf(stderr, "cannot read bpf map 'counts': %s\n", strerror(-r));
		return r;
	}
	r = prog_runs(skel->progs.profile_sample, &runs);
	if (r < 0) {
		fprintf(stderr, "cannot read bpf program info: %s\n", strerror(-r));
		return r;
	}
	*ret_runs = runs;
	*ret_bss = *skel->bss;
	return 0;
}

static int check(bool ok, const char *what, uint64_t got, const char *want)
{
	if (!ok)
		fprintf(stderr, "FAIL: %s: got %" PRIu64 ", want %s\n", what, got, want);
	return ok ? 0 : 1;
}

static int test_count(const char *workload)
{
	struct profile_bpf__bss bss;
	ProgRuns runs;
	uint64_t cpu_nanos, expected;
	Tally t;
	int fails = 0;

	if (profile_workload(workload, 0, 0, &t, &runs, &bss, &cpu_nanos) < 0)
		return 1;
	expected = cpu_nanos * SAMPLE_HZ / 1000000000ULL;
	printf("workload CPU time %.3f s: %" PRIu64 " samples expected at %u Hz\n",
	       (double)cpu_nanos / 1e9, expected, SAMPLE_HZ);
	printf("samples %" PRIu64 " (program runs %" PRIu64 ", %" PRIu64 " ns each), user stacks %"
	       PRIu64 " (lost %" PRIu64 "), leaf in text %" PRIu64 ", kernel stacks %" PRIu64
	       ", threads %zu\n", t.samples, runs.count, runs.nanos / (runs.count ? runs.count : 1),
	       t.user_stacks, t.lost_user_stacks, t.leaf_in_text, t.kernel_stacks, t.n_tids);

	/*
	 * The events fire on every CPU at 999 Hz and count whoever runs: the target's samples
	 * are what its CPU time is worth, however much of the machine it got (a busy machine
	 * gives it less: 2 threads x 1.5 s is worth ~3000 samples only on two idle CPUs).
	 * Attached before the workload's exec, so all of its CPU time was sampled.
	 */
	fails += check(t.samples * 10 >= expected * 9 && expected >= 100,
		       "samples counted for the target", t.samples,
		       ">= 90% of what the workload's CPU time is worth, and that >= 100");
	fails += check(runs.count >= t.samples, "program runs", runs.count, ">= samples counted");
	fails += check(t.foreign_samples == 0, "samples of other processes", t.foreign_samples,
		       "0 (tgids filter)");
	fails += check(t.n_tids >= 2, "distinct threads sampled", t.n_tids, ">= 2");
	fails += check(t.missing_stacks == 0, "stack hashes absent from 'stacks'", t.missing_stacks,
		       "0");
	/* `stacks` holds every distinct stack until it is full: none lost at this size */
	fails += check(t.user_stacks * 20 >= t.samples * 19, "samples with a user stack",
		       t.user_stacks, ">= 95% of samples");
	fails += check(bss.lost_stacks == 0 && t.lost_user_stacks == 0, "lost_stacks",
		       (uint64_t)bss.lost_stacks, "0");
	/* The workload spins in its own text; clock_gettime in the vDSO is the rest. */
	fails += check(t.leaf_in_text * 5 >= t.user_stacks * 4,
		       "user leaf ips in the workload's text", t.leaf_in_text,
		       ">= 80% of user stacks");
	fails += check(t.bad_kernel_leaves == 0, "kernel stacks with a user-space leaf",
		       t.bad_kernel_leaves, "0");
	fails += check(bss.dropped_samples == 0, "dropped_samples", bss.dropped_samples, "0");
	return fails ? 1 : 0;
}

static int read_pid_max(uint32_t *ret)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
	unsigned v;

	if (!f)
		return negative_errno();
	if (fscanf(f, "%u", &v) != 1)
		return -EBADMSG;
	*ret = v;
	return 0;
}

static int test_foreign_tgid(const char *workload)
{
	struct profile_bpf__bss bss;
	ProgRuns runs;
	uint32_t pid_max = 0;
	uint64_t cpu_nanos;
	Tally t;
	int fails = 0;

	if (read_pid_max(&pid_max) < 0) {
		fprintf(stderr, "cannot read /proc/sys/kernel/pid_max\n");
		return 1;
	}
	/* pid_max itself is never handed out. */
	if (profile_workload(workload, pid_max, 0, &t, &runs, &bss, &cpu_nanos) < 0)
		return 1;
	printf("tgid %u: samples %" PRIu64 " (program runs %" PRIu64 ")\n", pid_max, t.samples,
	       runs.count);
	fails += check(runs.count >= 100, "program runs", runs.count, ">= 100 (events fired)");
	fails += check(t.samples == 0, "samples counted for a tgid no process has", t.samples,
		       "0");
	return fails ? 1 : 0;
}

static int test_stacks_full(const char *workload)
{
	struct profile_bpf__bss bss;
	ProgRuns runs;
	uint64_t cpu_nanos;
	Tally t;
	int fails = 0;

	if (profile_workload(workload, 0, 1, &t, &runs, &bss, &cpu_nanos) < 0)
		return 1;
	printf("one-entry stacks: samples %" PRIu64 ", user stacks %" PRIu64 ", lost %" PRIu64
	       " (lost_stacks %" PRIu64 ")\n", t.samples, t.user_stacks, t.lost_user_stacks,
	       (uint64_t)bss.lost_stacks);
	fails += check(t.samples >= 100, "samples counted", t.samples, ">= 100");
	fails += check(t.lost_user_stacks > 0, "samples flagged with a lost user stack",
		       t.lost_user_stacks, "> 0");
	/* a sample taken in the kernel before the thread first ran in user mode has neither */
	fails += check((t.user_stacks + t.lost_user_stacks) * 100 >= t.samples * 99,
		       "samples with a stack or a lost one", t.user_stacks + t.lost_user_stacks,
		       ">= 99% of samples");
	fails += check(bss.lost_stacks >= t.lost_user_stacks, "lost_stacks", (uint64_t)bss.lost_stacks,
		       ">= samples flagged lost");
	fails += check(t.missing_stacks == 0, "stack hashes absent from 'stacks'", t.missing_stacks,
		       "0");
	return fails ? 1 : 0;
}

static int test_load_failure(void)
{
	_cleanup_(profile_bpf__destroyp) struct profile_bpf *skel = NULL;
	int r;

	skel = profile_bpf__open();
	if (!skel) {
		fprintf(stderr, "cannot open bpf skeleton 'profile_bpf': %m\n");
		return 1;
	}
	/* The kernel refuses a zero-sized map. */
	r = bpf_map__set_max_entries(skel->maps.stacks, 0);
	if (r < 0) {
		fprintf(stderr, "cannot resize bpf map 'stacks': %s\n", strerror(-r));
		return 1;
	}
	libbpf_messages[0] = '\0';
	r = profile_bpf__load(skel);
	if (r >= 0) {
		fprintf(stderr, "FAIL: loading with a zero-sized 'stacks' succeeded\n");
		return 1;
	}
	printf("load failed as expected: %s\n", strerror(-r));
	if (!strstr(libbpf_messages, "stacks")) {
		fprintf(stderr, "FAIL: libbpf's error does not name the map 'stacks':\n%s\n",
			libbpf_messages);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *workload = NULL;

	if (argc != 3) {
		fprintf(stderr, "usage: %s WORKLOAD count|foreign-tgid|stacks-full|load-failure\n", argv[0]);
		return 2;
	}
	/* /proc/PID/maps names the mapped file by its canonical path. */
	workload = realpath(argv[1], NULL);
	if (!workload) {
		fprintf(stderr, "cannot resolve workload '%s': %m\n", argv[1]);
		return 1;
	}
	libbpf_set_print(libbpf_log);

	if (strcmp(argv[2], "count") == 0)
		return test_count(workload);
	if (strcmp(argv[2], "foreign-tgid") == 0)
		return test_foreign_tgid(workload);
	if (strcmp(argv[2], "stacks-full") == 0)
		return test_stacks_full(workload);
	if (strcmp(argv[2], "load-failure") == 0)
		return test_load_failure();
	fprintf(stderr, "unknown mode '%s'\n", argv[2]);
	return 2;
}
