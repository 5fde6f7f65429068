/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-sampling MODE ...: what the sampling engine costs (BENCHMARKS.md,
 * "Sampling engine").
 *
 *   collector WORKLOAD_SPLIT SECONDS   collector CPU per sample: drain + parse
 *                                      (no-op resolver), and with the default resolver
 *   zero-loss WORKLOAD_SPLIT SECONDS   999 Hz on 2 busy threads: dropped/lost samples
 *   slowdown WORKLOAD_FIXED_WORK RUNS  the workload's own run time for a fixed amount of
 *                                      work: alone, under profd's engine, under perf record
 *   late-thread WORKLOAD_LATE_THREAD   samples of a thread created mid-session vs its
 *                                      expected count (how new threads are followed)
 *   open-cost WORKLOAD_SPLIT THREADS   time and fds to open the events of a many-thread target
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "sampling-session.h"
#include "time-util.h"


static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), compare_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Fork a child that waits for go_child() before exec'ing argv, stdout to 'out_fd' (or -1). */
static pid_t spawn_held(char **argv, int out_fd, int *ret_go)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		char c;

		if (read(go[0], &c, 1) != 1)
			_exit(126);
		if (out_fd >= 0)
			dup2(out_fd, STDOUT_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	*ret_go = go[1];
	return pid;
}

static void go_child(int go)
{
	(void)!write(go, "x", 1);
	close(go);
}

static uint64_t wait_cpu(pid_t pid, int *ret_status)
{
	struct rusage ru;
	int status = 0;

	if (wait4(pid, &status, 0, &ru) < 0)
		abort();
	if (ret_status)
		*ret_status = status;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static int noop_resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			Profile *profile, SampleStack *ret)
{
	*ret = (SampleStack){ .stack = PROFILE_NONE };
	return 0;
}

/* What the collector thread spent, split by where. */
typedef struct CollectorCost {
	uint64_t setup;   /* new() + start(): opening events, mapping rings, reading /proc */
	uint64_t process; /* inside sampling_session_process(): drain, parse, resolve */
	uint64_t loop;    /* the whole loop, epoll_wait() sleeps and wakeups included */
} CollectorCost;

/*
 * Sample 'argv' (held until the session runs) to its end, driving the session
 * with process() + epoll_wait() as the daemon does; returns the metrics.
 */
static int sample_child_setup(char **argv, const SamplingOptions *o, int out_fd, SamplingMetrics *m,
			      uint64_t *ret_cpu, CollectorCost *ret_cost)
{
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	CollectorCost cost = {};
	uint64_t loop_start;
	int go, r;
	pid_t pid = spawn_held(argv, out_fd, &go);

	r = sampling_session_new(pid, o, &s);
	if (r < 0) {
		fprintf(stderr, "cannot sample pid %d: %s\n", (int)pid, strerror(-r));
		kill(pid, SIGKILL);
		wait_cpu(pid, NULL);
		return r;
	}
	r = sampling_session_start(s);
	sampling_session_get_metrics(s, m);
	cost.setup = m->collector_cpu_nanos;
	go_child(go);
	loop_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	while (r >= 0 && (r = sampling_session_process(s)) > 0) {
		struct epoll_event ev[8];

		if (epoll_wait(sampling_session_get_fd(s), ev, 8, -1) < 0 && errno != EINTR)
			r = -errno;
	}
	cost.loop = clock_nanos(CLOCK_THREAD_CPUTIME_ID) - loop_start;
	sampling_session_get_metrics(s, m);
	cost.process = m->collector_cpu_nanos - cost.setup;
	if (ret_cost)
		*ret_cost = cost;
	*ret_cpu = wait_cpu(pid, NULL);
	return r;
}

static int sample_child(char **argv, const SamplingOptions *o, int out_fd, SamplingMetrics *m,
			uint64_t *ret_cpu)
{
	return sample_child_setup(argv, o, out_fd, m, ret_cpu, NULL);
}

static int bench_collector(char *workload, const char *seconds)
{
	char *argv[] = { workload, (char *)seconds, "2", NULL };
	static const struct {
		const char *name;
		SampleResolveFn resolve;
		const char *backend;
	} modes[] = {
		{ "drain+parse (perf-dwarf, no-op resolver)", noop_resolve, "perf-dwarf" },
		{ "drain+parse+default resolver (perf-dwarf)", NULL, "perf-dwarf" },
		{ "drain+parse (perf-fp, no-op resolver)", noop_resolve, "perf-fp" },
		{ "drain+parse+default resolver (perf-fp)", NULL, "perf-fp" },
	};

	for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
		uint64_t process[3], loop[3];

		for (size_t run = 0; run < ELEMENTSOF(process); run++) {
			SamplingOptions o = { .hz = 999, .duration_nanos = 60 * NSEC_PER_SEC,
					      .resolve = modes[i].resolve, .backend = modes[i].backend };
			SamplingMetrics m;
			CollectorCost c;
			uint64_t cpu;

			if (sample_child_setup(argv, &o, -1, &m, &cpu, &c) < 0 || m.samples_captured == 0)
				return EXIT_FAILURE;
			process[run] = c.process / m.samples_captured;
			loop[run] = c.loop / m.samples_captured;
			printf("  %s run %zu: %" PRIu64 " samples, %" PRIu64 " ring bytes, setup %.2f ms, "
			       "process() %.2f ms, whole loop %.2f ms\n",
			       modes[i].name, run, m.samples_captured, m.ring_bytes, c.setup / 1e6,
			       c.process / 1e6, c.loop / 1e6);
		}
		printf("%s: median per sample %" PRIu64 " ns in process(), %" PRIu64
		       " ns with the loop's sleeps and wakeups\n",
		       modes[i].name, median(process, ELEMENTSOF(process)),
		       median(loop, ELEMENTSOF(loop)));
	}
	return EXIT_SUCCESS;
}

static int bench_zero_loss(char *workload, const char *seconds)
{
	char *argv[] = { workload, (char *)seconds, "2", NULL };
	SamplingOptions o = { .hz = 999,
			      .duration_nanos = 120 * NSEC_PER_SEC,
			      .max_duration_nanos = 120 * NSEC_PER_SEC };
	SamplingMetrics m;
	uint64_t cpu;
	_cleanup_free_ char *json = NULL;

	if (sample_child(argv, &o, -1, &m, &cpu) < 0)
		return EXIT_FAILURE;
	if (sampling_metrics_format_json(&m, &json) >= 0)
		fputs(json, stdout);
	printf("2 threads x %s s at 999 Hz: %" PRIu64 " samples for %.2f CPU s (%.1f%% of hz x CPU), "
	       "dropped %" PRIu64 ", lost records %" PRIu64 ", throttled %" PRIu64 "\n",
	       seconds, m.samples_captured, cpu / 1e9,
	       100.0 * m.samples_captured / (cpu * 999.0 / NSEC_PER_SEC), m.samples_dropped,
	       m.lost_records, m.throttle_events);
	return m.samples_dropped == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The wall and CPU time the workload printed into 'fd'; empties it for the next run. */
static int read_workload_times(int fd, uint64_t *ret_wall, uint64_t *ret_cpu)
{
	char buf[96] = "";
	unsigned long long wall, cpu;
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	if (ftruncate(fd, 0) < 0 || sscanf(buf, "%llu %llu", &wall, &cpu) != 2)
		return -EIO;
	lseek(fd, 0, SEEK_SET);
	*ret_wall = wall;
	*ret_cpu = cpu;
	return 0;
}

typedef enum SlowdownMode {
	MODE_ALONE,
	MODE_PROFD_DWARF,
	MODE_PROFD_FP,
	MODE_PERF_FP,
	MODE_PERF_DWARF,
	_MODE_MAX,
} SlowdownMode;

static const char *const mode_names[_MODE_MAX] = {
	[MODE_ALONE] = "alone",
	[MODE_PROFD_DWARF] = "profd perf-dwarf (16 KiB stacks, default resolver)",
	[MODE_PROFD_FP] = "profd perf-fp",
	[MODE_PERF_FP] = "perf record -F 999 -g",
	[MODE_PERF_DWARF] = "perf record -F 999 --call-graph dwarf,16384",
};

static int slowdown_run(SlowdownMode mode, char *workload, int out_fd, uint64_t *ret_wall,
			uint64_t *ret_cpu, uint64_t *ret_samples)
{
	char *wargv[] = { workload, "150", "2", NULL };
	char *perf_fp[] = { "/usr/bin/perf", "record", "-q", "-F", "999", "-g", "-o",
			    "/tmp/bench-sampling-perf.data", "--", workload, "150", "2", NULL };
	char *perf_dwarf[] = { "/usr/bin/perf", "record", "-q", "-F", "999", "--call-graph",
			       "dwarf,16384", "-o", "/tmp/bench-sampling-perf.data", "--", workload,
			       "150", "2", NULL };
	SamplingOptions o = { .hz = 999, .duration_nanos = 60 * NSEC_PER_SEC };
	SamplingMetrics m = {};
	uint64_t rusage_cpu;
	int go, status;
	pid_t pid;

	*ret_samples = 0;
	switch (mode) {
	case MODE_ALONE:
		pid = spawn_held(wargv, out_fd, &go);
		go_child(go);
		wait_cpu(pid, &status);
		break;
	case MODE_PROFD_DWARF:
	case MODE_PROFD_FP:
		o.backend = mode == MODE_PROFD_FP ? "perf-fp" : "perf-dwarf";
		if (sample_child(wargv, &o, out_fd, &m, &rusage_cpu) < 0)
			return -1;
		*ret_samples = m.samples_captured;
		break;
	default:
		pid = spawn_held(mode == MODE_PERF_FP ? perf_fp : perf_dwarf, out_fd, &go);
		go_child(go);
		wait_cpu(pid, &status);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return -1;
		break;
	}
	/* the workload's own figures: the profiler's CPU is not in them */
	return read_workload_times(out_fd, ret_wall, ret_cpu);
}

static int bench_slowdown(char *workload, const char *runs_arg)
{
	int runs = atoi(runs_arg);
	uint64_t wall[_MODE_MAX][16], cpu[_MODE_MAX][16], samples[16] = {};
	char path[] = "/tmp/bench-sampling-XXXXXX";
	int out_fd = mkstemp(path);

	if (runs < 1 || runs > 16 || out_fd < 0)
		return EXIT_FAILURE;
	unlink(path);
	/* interleaved, so drift in the machine's load hits every mode alike */
	for (int run = 0; run < runs; run++)
		for (SlowdownMode mode = 0; mode < _MODE_MAX; mode++) {
			uint64_t n = 0;

			if (slowdown_run(mode, workload, out_fd, &wall[mode][run], &cpu[mode][run], &n) < 0) {
				fprintf(stderr, "%s: run failed\n", mode_names[mode]);
				return EXIT_FAILURE;
			}
			if (mode == MODE_PROFD_DWARF)
				samples[run] = n;
			printf("  run %d %-48s wall %.3f s, cpu %.3f s\n", run, mode_names[mode],
			       wall[mode][run] / 1e9, cpu[mode][run] / 1e9);
		}

	uint64_t base_wall = median(wall[MODE_ALONE], (size_t)runs);
	uint64_t base_cpu = median(cpu[MODE_ALONE], (size_t)runs);
	for (SlowdownMode mode = 0; mode < _MODE_MAX; mode++) {
		uint64_t w = median(wall[mode], (size_t)runs), c = median(cpu[mode], (size_t)runs);

		printf("%-48s median wall %.3f s (x%.3f), median cpu %.3f s (x%.3f)\n", mode_names[mode],
		       w / 1e9, (double)w / base_wall, c / 1e9, (double)c / base_cpu);
	}
	{
		uint64_t n = median(samples, (size_t)runs);
		uint64_t c = median(cpu[MODE_PROFD_DWARF], (size_t)runs);

		/* the CPU the same work took beyond the baseline, spread over the samples */
		if (n > 0)
			printf("profd perf-dwarf: %" PRIu64 " samples, %" PRId64
			       " ns extra target CPU per sample\n",
			       n, ((int64_t)c - (int64_t)base_cpu) / (int64_t)n);
	}
	close(out_fd);
	unlink("/tmp/bench-sampling-perf.data");
	return EXIT_SUCCESS;
}

static int bench_late_thread(char *workload)
{
	char *argv[] = { workload, "3", "1", NULL };
	SamplingOptions o = { .hz = 999, .duration_nanos = 60 * NSEC_PER_SEC };
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	const Profile *p;
	uint64_t late = 0, first = UINT64_MAX;
	uint32_t main_tid;
	int go, r;
	pid_t pid = spawn_held(argv, -1, &go);

	r = sampling_session_new(pid, &o, &s);
	if (r < 0)
		return EXIT_FAILURE;
	main_tid = (uint32_t)pid;
	sampling_session_start(s);
	go_child(go);
	r = sampling_session_run(s);
	wait_cpu(pid, NULL);
	p = sampling_session_get_profile(s);
	for (size_t i = 0; i < p->n_samples; i++)
		if (p->samples[i].tid != main_tid) {
			late++;
			if (p->samples[i].time_ns < first)
				first = p->samples[i].time_ns;
		}
	/* the late thread spins from 1 s to 3 s after the workload starts */
	printf("late thread: %" PRIu64 " samples, the first %.1f ms into the session "
	       "(the thread is created about 1000 ms in)\n",
	       late, first / 1e6);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int bench_open_cost(char *workload, const char *threads)
{
	char *argv[] = { workload, "5", (char *)threads, NULL };
	int go;
	pid_t pid = spawn_held(argv, -1, &go);
	SamplingOptions o = { .hz = 99, .duration_nanos = NSEC_PER_SEC / 2 };
	SamplingSession *s = NULL;
	uint64_t t0, t1, c0, c1;
	int r;

	go_child(go);
	usleep(300000); /* let it create its threads */
	c0 = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	t0 = clock_nanos(CLOCK_MONOTONIC);
	r = sampling_session_new(pid, &o, &s);
	t1 = clock_nanos(CLOCK_MONOTONIC);
	c1 = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	if (r < 0) {
		fprintf(stderr, "open: %s\n", strerror(-r));
		kill(pid, SIGKILL);
		wait_cpu(pid, NULL);
		return EXIT_FAILURE;
	}
	{
		SamplingMetrics m;

		sampling_session_get_metrics(s, &m);
		/* wall time suffers from the busy target competing for the CPUs; CPU time does not */
		printf("%" PRIu64 " busy threads x %ld CPUs: events opened in %.2f ms wall, %.2f ms "
		       "collector CPU (%.1f us CPU per thread)\n",
		       m.threads_at_start, sysconf(_SC_NPROCESSORS_ONLN), (t1 - t0) / 1e6,
		       (c1 - c0) / 1e6, (c1 - c0) / 1e3 / (double)m.threads_at_start);
	}
	sampling_session_free(s);
	kill(pid, SIGKILL);
	wait_cpu(pid, NULL);
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "collector") == 0)
		return bench_collector(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "zero-loss") == 0)
		return bench_zero_loss(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "slowdown") == 0)
		return bench_slowdown(argv[2], argv[3]);
	if (argc >= 3 && strcmp(argv[1], "late-thread") == 0)
		return bench_late_thread(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "open-cost") == 0)
		return bench_open_cost(argv[2], argv[3]);
	fprintf(stderr, "usage: bench-sampling collector|zero-loss|slowdown|late-thread|open-cost ...\n");
	return 2;
}
