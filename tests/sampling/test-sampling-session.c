/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sampling-session CASE: sampling sessions against real workloads with
 * real perf events. Workload paths come from the environment (meson sets
 * WORKLOAD_SPLIT, WORKLOAD_LATE_THREAD, WORKLOAD_DLOPEN, WORKLOAD_PLUGIN,
 * SLEEP_PROGRAM).
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "sampling-session.h"
#include "test-util.h"
#include "workload-process.h"

static void stop_session(void *session)
{
	sampling_session_stop(session);
}

/* When run_session()'s last stopper called sampling_session_stop() (CLOCK_REALTIME) */
static uint64_t stop_called_unix_nanos;

/* Run a session, stopping it from another thread after 'stop_after' (0: never). */
static int run_session(pid_t pid, const SamplingOptions *o, uint64_t stop_after, SamplingMetrics *m,
		       SamplingSession **ret)
{
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	DelayedCall stopper;
	int r;

	r = sampling_session_new(pid, o, &s);
	if (r < 0)
		return r;
	stopper = (DelayedCall){ .fn = stop_session, .arg = s, .after_nanos = stop_after };
	if (stop_after)
		delayed_call_start(&stopper);
	r = sampling_session_run(s);
	if (stop_after) {
		delayed_call_join(&stopper);
		stop_called_unix_nanos = stopper.called_unix_nanos;
	}
	sampling_session_get_metrics(s, m);
	print_metrics(m);
	if (ret)
		*ret = TAKE_PTR(s);
	return r;
}

static uint64_t thread_count_in_profile(const Profile *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		bool dup = false;

		for (size_t j = 0; j < i && !dup; j++)
			dup = p->samples[j].tid == p->samples[i].tid;
		n += !dup;
	}
	return n;
}

static int test_busy_two_threads(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "3", "2", NULL);
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	SamplingOptions o = { .hz = 999 };
	SamplingMetrics m;
	uint64_t cpu_before, cpu_total, expected;
	int r;

	wait_threads(pid, 2, "workload-split");
	r = sampling_session_new(pid, &o, &s);
	CHECK(r == 0, "sampling_session_new: %s", strerror(-r));
	if (r < 0)
		return test_result();
	cpu_before = target_cpu_nanos(pid);
	r = sampling_session_run(s);
	CHECK(r == 0, "run: %s", strerror(-r));
	cpu_total = reap_exited(pid);
	sampling_session_get_metrics(s, &m);
	print_metrics(&m);

	/* samples the target's CPU time during the window is worth at 999 Hz */
	expected = (cpu_total - cpu_before) * 999 / NSEC;
	fprintf(stderr, "cpu in window %.3f s, expected %llu samples, got %llu\n",
		(double)(cpu_total - cpu_before) / 1e9, (unsigned long long)expected,
		(unsigned long long)m.samples_captured);
	CHECK(m.samples_captured * 10 >= expected * 9, "captured %llu < 90%% of %llu",
	      (unsigned long long)m.samples_captured, (unsigned long long)expected);
	CHECK(m.samples_dropped == 0, "dropped %llu", (unsigned long long)m.samples_dropped);
	CHECK(m.threads_seen == 2, "threads_seen %llu", (unsigned long long)m.threads_seen);
	CHECK(m.threads_at_start == 2, "threads_at_start %llu", (unsigned long long)m.threads_at_start);
	CHECK(strcmp(m.end_reason, "target-exited") == 0, "end_reason %s", m.end_reason);
	CHECK(m.hz == 999 && !m.clamped, "hz %u clamped %d", m.hz, m.clamped);
	CHECK(strcmp(m.backend, "perf-dwarf") == 0 && strcmp(m.event, "cpu-clock") == 0,
	      "backend %s event %s", m.backend, m.event);
	CHECK(m.collector_cpu_nanos > 0, "collector_cpu_nanos 0");
	CHECK(sampling_session_get_profile(s)->n_samples == m.samples_captured,
	      "profile has %zu samples, metrics %llu", sampling_session_get_profile(s)->n_samples,
	      (unsigned long long)m.samples_captured);
	/* every sample has at least its user IP as a frame */
	for (size_t i = 0; i < sampling_session_get_profile(s)->n_samples; i++)
		if (sampling_session_get_profile(s)->samples[i].stack == PROFILE_NONE) {
			CHECK(false, "sample %zu has an empty stack", i);
			break;
		}
	return test_result();
}

static int test_late_thread(void)
{
	/*
	 * Held before its exec until the session runs: its second thread, 1.5 s into the
	 * workload, comes mid-session however late a loaded machine got the session going.
	 */
	char *argv[] = { (char *)env_path("WORKLOAD_LATE_THREAD"), (char *)"3", (char *)"1.5", NULL };
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	SamplingOptions o = { .hz = 499 };
	SamplingMetrics m;
	int go, r;
	pid_t pid;

	pid = spawn_held(argv, &go);
	r = sampling_session_new(pid, &o, &s);
	CHECK(r == 0, "new: %s", strerror(-r));
	if (r >= 0)
		r = sampling_session_start(s);
	CHECK(r >= 0, "start: %s", strerror(-r));
	CHECK(write(go, "x", 1) == 1, "release the workload");
	close(go);
	if (r >= 0)
		r = sampling_session_run(s);
	reap(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	if (!s)
		return test_result();
	sampling_session_get_metrics(s, &m);
	print_metrics(&m);
	CHECK(m.threads_at_start == 1, "threads_at_start %llu", (unsigned long long)m.threads_at_start);
	CHECK(m.threads_seen == 2, "late thread not seen: threads_seen %llu",
	      (unsigned long long)m.threads_seen);
	CHECK(sampling_session_get_profile(s)->n_threads >= 2, "profile names %u threads",
	      sampling_session_get_profile(s)->n_threads);
	return test_result();
}

static int test_stop(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "300", "1", NULL);
	SamplingOptions o = { .hz = 999 };
	SamplingMetrics m;
	int r;

	wait_threads(pid, 1, "workload-split");
	r = run_session(pid, &o, NSEC / 2, &m, NULL);
	reap(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	/*
	 * The window ran until the stop came and ended soon after, measured from the stop call
	 * itself: when a loaded machine wakes the stopper late, the window is longer, rightly.
	 * The latency allowed leaves room for waking the collector late; a stop that is not
	 * acted on runs the 10 s default window (its target outlives it).
	 */
	{
		int64_t latency = (int64_t)(m.start_unix_nanos + m.duration_nanos) -
				  (int64_t)stop_called_unix_nanos;

		CHECK(latency >= -1000000 && latency <= (int64_t)(3 * NSEC / 2),
		      "the window ended %.3f s after the stop call (duration %.3f s)",
		      (double)latency / 1e9, (double)m.duration_nanos / 1e9);
	}
	CHECK(strcmp(m.end_reason, "stopped") == 0, "end_reason %s", m.end_reason);
	/* other tests share the CPUs: only bound the count from above, by one thread's 999 Hz */
	CHECK(m.samples_captured > 0 && m.samples_captured <= m.duration_nanos * 999 / NSEC + 10,
	      "captured %llu in %llu ns", (unsigned long long)m.samples_captured,
	      (unsigned long long)m.duration_nanos);
	return test_result();
}

static int test_clamp_hz(void)
{
	pid_t pid = spawn(env_path("SLEEP_PROGRAM"), "30", NULL);
	SamplingOptions o = { .hz = 1000000 };
	SamplingMetrics m;
	uint32_t max_hz = 0;
	int r;

	wait_threads(pid, 1, "sleep");
	CHECK(sampling_max_hz(&max_hz) == 0 && max_hz >= 1 && max_hz <= 10000, "max_hz %u", max_hz);
	r = run_session(pid, &o, NSEC / 5, &m, NULL);
	reap(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	CHECK(m.hz <= 10000 && m.hz == max_hz, "hz %u, max_hz %u", m.hz, max_hz);
	CHECK(m.requested_hz == 1000000, "requested_hz %u", m.requested_hz);
	CHECK(m.clamped, "not clamped");
	CHECK(m.period_nanos == 1000000000ULL / m.hz, "period %llu", (unsigned long long)m.period_nanos);
	return test_result();
}

static int test_clamp_duration(void)
{
	pid_t pid = spawn(env_path("SLEEP_PROGRAM"), "30", NULL);
	SamplingOptions o = { .duration_nanos = 3600 * NSEC };
	SamplingMetrics m;
	int r;

	wait_threads(pid, 1, "sleep");
	/* the default ceiling: don't wait for it, stop early and read what was in force */
	r = run_session(pid, &o, NSEC / 5, &m, NULL);
	CHECK(r == 0, "run: %s", strerror(-r));
	CHECK(m.clamped, "not clamped");
	CHECK(m.requested_duration_nanos == 3600 * NSEC, "requested %llu",
	      (unsigned long long)m.requested_duration_nanos);
	CHECK(m.effective_duration_nanos == SAMPLING_DEFAULT_MAX_DURATION_NANOS, "effective %llu",
	      (unsigned long long)m.effective_duration_nanos);
	/* stopped after 0.2 s, however late a loaded machine let the stop come: not the ceiling */
	CHECK(strcmp(m.end_reason, "stopped") == 0 && m.duration_nanos < m.effective_duration_nanos,
	      "end_reason %s, duration %llu", m.end_reason, (unsigned long long)m.duration_nanos);

	/* a caller's (the daemon's) ceiling, actually reached */
	o = (SamplingOptions){ .duration_nanos = 3600 * NSEC, .max_duration_nanos = NSEC / 2 };
	r = run_session(pid, &o, 0, &m, NULL);
	reap(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	CHECK(m.clamped && m.effective_duration_nanos == NSEC / 2, "effective %llu",
	      (unsigned long long)m.effective_duration_nanos);
	CHECK(strcmp(m.end_reason, "duration") == 0, "end_reason %s", m.end_reason);
	/* the target sleeps 30 s: before that (and "duration") means the 0.5 s ceiling ended it */
	CHECK(m.duration_nanos >= NSEC / 2 && m.duration_nanos < 30 * NSEC,
	      "duration %llu", (unsigned long long)m.duration_nanos);
	return test_result();
}

static int test_buffer_full(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "20", "1", NULL);
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	SamplingOptions o = { .hz = 999, .duration_nanos = 20 * NSEC, .sample_budget = 100 };
	SamplingMetrics m;
	uint64_t cpu;
	int r;

	wait_threads(pid, 1, "workload-split");
	cpu = target_cpu_nanos(pid);
	r = run_session(pid, &o, 0, &m, &s);
	cpu = target_cpu_nanos(pid) - cpu;
	reap(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	CHECK(m.buffer_full, "buffer_full not set");
	CHECK(m.samples_captured == 100, "captured %llu", (unsigned long long)m.samples_captured);
	CHECK(sampling_session_get_profile(s)->n_samples == 100, "profile has %zu samples",
	      sampling_session_get_profile(s)->n_samples);
	/*
	 * 100 samples at 999 Hz are 0.1 s of the target's CPU time: the window ended there, not
	 * after the 20 s asked. Measured in the target's CPU time, which a loaded machine does
	 * not stretch as it does the wall time (0.53 s seen).
	 */
	CHECK(cpu < NSEC, "the target used %.3f s of CPU time in the window (%.3f s long)",
	      (double)cpu / 1e9, (double)m.duration_nanos / 1e9);
	CHECK(strcmp(m.end_reason, "buffer-full") == 0, "end_reason %s", m.end_reason);

	/* the caller's limit caps an explicit capacity */
	o.sample_budget = 1000;
	o.sample_budget_limit = 20;
	r = run_session(getpid(), &o, NSEC / 5, &m, NULL);
	CHECK(r == 0 && m.sample_budget == 20, "r %d capacity %llu", r,
	      (unsigned long long)m.sample_budget);
	return test_result();
}

static int test_no_such_process(void)
{
	SamplingSession *s = NULL;
	pid_t pid = spawn(env_path("SLEEP_PROGRAM"), "0", NULL);
	int r;

	reap_exited(pid);
	/* just reaped, and pids are not reused this quickly */
	r = sampling_session_new(pid, NULL, &s);
	CHECK(r == -ESRCH, "got %d (%s), wanted -ESRCH", r, strerror(-r));
	CHECK(s == NULL, "session returned on failure");
	r = sampling_session_new(0, NULL, &s);
	CHECK(r == -ESRCH, "pid 0: got %d", r);
	return test_result();
}

/* A collector that does not drain: the kernel drops samples and says so in LOST records. */
static int test_lost(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "30", "1", NULL);
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	SamplingOptions o = { .hz = 999, .duration_nanos = 20 * NSEC };
	cpu_set_t one_cpu;
	CpuSince used;
	SamplingMetrics m;
	int r;

	wait_threads(pid, 1, "workload-split");
	/* one CPU, so one ring: the ring it overruns is the one its next sample goes to */
	CPU_ZERO(&one_cpu);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one_cpu);
	CHECK(sched_setaffinity(pid, sizeof(one_cpu), &one_cpu) == 0, "sched_setaffinity: %m");
	r = sampling_session_new(pid, &o, &s);
	CHECK(r == 0, "new: %s", strerror(-r));
	if (r < 0) {
		reap(pid);
		return test_result();
	}
	CHECK(sampling_session_start(s) == 0, "start");
	/*
	 * Steps in the target's CPU time, however long a loaded machine takes to give it:
	 * ~17 KiB per sample at 999 Hz fills a 1 MiB ring in ~60 ms, so after 0.5 s undrained
	 * the kernel has dropped samples; one drain makes room, and the kernel writes its LOST
	 * record before the next sample, which the target takes in its next 0.25 s.
	 */
	used = (CpuSince){ .pid = pid, .since = target_cpu_nanos(pid), .nanos = NSEC / 2 };
	CHECK(test_wait_until(30, cpu_used, &used), "the target never used %.2f s of CPU",
	      (double)used.nanos / 1e9);
	CHECK(sampling_session_process(s) > 0, "the session ended while it was overrun");
	used = (CpuSince){ .pid = pid, .since = target_cpu_nanos(pid), .nanos = NSEC / 4 };
	CHECK(test_wait_until(30, cpu_used, &used), "the target never used %.2f s of CPU",
	      (double)used.nanos / 1e9);
	sampling_session_stop(s);
	r = sampling_session_run(s);
	reap(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	sampling_session_get_metrics(s, &m);
	print_metrics(&m);
	CHECK(m.lost_records > 0 && m.lost_samples > 0, "lost records %llu samples %llu",
	      (unsigned long long)m.lost_records, (unsigned long long)m.lost_samples);
	CHECK(m.samples_dropped >= m.lost_samples, "dropped %llu", (unsigned long long)m.samples_dropped);
	CHECK(sampling_metrics_fidelity(&m) < 1.0, "fidelity %f", sampling_metrics_fidelity(&m));
	CHECK(m.samples_captured > 0, "nothing kept");
	return test_result();
}

/* A thread id stands for its whole process. */
static int test_thread_id(void)
{
	/* outlives the window however late a loaded machine starts it */
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "10", "2", NULL), tid = 0;
	SamplingOptions o = { .hz = 499, .duration_nanos = NSEC / 2 };
	SamplingMetrics m;
	char fn[64];
	struct dirent *de;
	DIR *d;
	int r;

	wait_threads(pid, 2, "workload-split");
	/* the other thread in /proc/<pid>/task (a busy machine hands out tids anywhere) */
	snprintf(fn, sizeof(fn), "/proc/%d/task", (int)pid);
	d = opendir(fn);
	while (d && (de = readdir(d)) && !tid)
		if (atoi(de->d_name) > 0 && atoi(de->d_name) != pid)
			tid = atoi(de->d_name);
	if (d)
		closedir(d);
	CHECK(tid != 0, "second thread not found");
	r = run_session(tid, &o, 0, &m, NULL);
	reap(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	CHECK(m.threads_at_start == 2, "threads_at_start %llu", (unsigned long long)m.threads_at_start);
	CHECK(m.samples_captured > 0 && m.threads_seen == 2, "captured %llu seen %llu",
	      (unsigned long long)m.samples_captured, (unsigned long long)m.threads_seen);
	return test_result();
}

static int test_target_exits(void)
{
	/* it exits (is killed) once it ran 0.5 s in the session, however long that takes */
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "300", "1", NULL);
	SamplingOptions o = { .hz = 999, .duration_nanos = 60 * NSEC };
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	CpuCall exit_call = { .fn = kill_pid, .arg = &pid, .cpu = { .pid = pid, .nanos = NSEC / 2 } };
	SamplingMetrics m;
	uint64_t cpu, expected;
	int r;

	wait_threads(pid, 1, "workload-split");
	r = sampling_session_new(pid, &o, &s);
	CHECK(r == 0, "new: %s", strerror(-r));
	if (r < 0) {
		reap(pid);
		return test_result();
	}
	/* what the target ran before the window is not the session's to sample */
	cpu = target_cpu_nanos(pid);
	cpu_call_start(&exit_call);
	r = sampling_session_run(s);
	cpu_call_join(&exit_call);
	cpu = reap_exited(pid) - cpu;
	sampling_session_get_metrics(s, &m);
	print_metrics(&m);
	CHECK(r == 0, "run: %s", strerror(-r));
	CHECK(strcmp(m.end_reason, "target-exited") == 0, "end_reason %s", m.end_reason);
	/* the exit cut the 60 s window short */
	CHECK(m.duration_nanos < m.effective_duration_nanos, "duration %llu",
	      (unsigned long long)m.duration_nanos);
	/* the samples of the last moments before exit are kept too */
	expected = cpu * 999 / NSEC;
	CHECK(m.samples_captured * 10 >= expected * 8, "captured %llu of %llu",
	      (unsigned long long)m.samples_captured, (unsigned long long)expected);
	return test_result();
}

static int test_idle(void)
{
	pid_t pid = spawn(env_path("SLEEP_PROGRAM"), "30", NULL);
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	SamplingOptions o = { .hz = 999, .duration_nanos = NSEC / 2 };
	SamplingMetrics m;
	int r;

	wait_threads(pid, 1, "sleep");
	wait_asleep(pid);
	r = run_session(pid, &o, 0, &m, &s);
	reap(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	CHECK(m.samples_captured == 0, "captured %llu", (unsigned long long)m.samples_captured);
	CHECK(m.threads_seen == 0 && m.threads_at_start == 1, "seen %llu at start %llu",
	      (unsigned long long)m.threads_seen, (unsigned long long)m.threads_at_start);
	CHECK(strcmp(m.end_reason, "duration") == 0, "end_reason %s", m.end_reason);
	CHECK(sampling_metrics_fidelity(&m) == 1.0, "fidelity %f", sampling_metrics_fidelity(&m));
	/* the thread is named from /proc even without samples */
	CHECK(sampling_session_get_profile(s)->n_threads == 1, "n_threads %u",
	      sampling_session_get_profile(s)->n_threads);
	return test_result();
}

static int test_events_and_backends(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "3", "1", NULL);
	SamplingSession *s = NULL;
	SamplingOptions o = { .event = "cycles" };
	SamplingMetrics m;
	int r;

	wait_threads(pid, 1, "workload-split");
	r = sampling_session_new(pid, &o, &s);
	if (r == 0) {
		fprintf(stderr, "note: this machine has a PMU, cycles sampling works\n");
		sampling_session_free(s);
	} else
		CHECK(r == -EOPNOTSUPP, "cycles: got %d (%s), wanted -EOPNOTSUPP", r, strerror(-r));

	o = (SamplingOptions){ .backend = "bpf" };
	CHECK(sampling_session_new(pid, &o, &s) == -EOPNOTSUPP, "bpf not refused as unsupported");
	o = (SamplingOptions){ .backend = "nonsense" };
	CHECK(sampling_session_new(pid, &o, &s) == -EINVAL, "unknown backend accepted");
	o = (SamplingOptions){ .event = "nonsense" };
	CHECK(sampling_session_new(pid, &o, &s) == -EINVAL, "unknown event accepted");

	/* frame-pointer mode and task-clock sample too */
	o = (SamplingOptions){ .backend = "perf-fp", .event = "task-clock", .hz = 499,
			       .duration_nanos = NSEC / 4 };
	r = run_session(pid, &o, 0, &m, NULL);
	CHECK(r == 0, "perf-fp: %s", strerror(-r));
	CHECK(strcmp(m.backend, "perf-fp") == 0 && strcmp(m.event, "task-clock") == 0 &&
		      m.stack_bytes == 0, "backend %s event %s stack_bytes %u", m.backend, m.event,
	      m.stack_bytes);
	CHECK(m.samples_captured > 0, "perf-fp captured %llu", (unsigned long long)m.samples_captured);

	o = (SamplingOptions){ .backend = "auto", .hz = 499, .duration_nanos = NSEC / 4,
			       .exclude_kernel = true, .stack_bytes = 4096 };
	r = run_session(pid, &o, 0, &m, NULL);
	CHECK(r == 0 && strcmp(m.backend, "perf-dwarf") == 0 && m.stack_bytes == 4096,
	      "auto: r %d backend %s stack_bytes %u", r, m.backend, m.stack_bytes);
	reap(pid);
	return test_result();
}

/* A library dlopen'ed mid-session reaches the process model through MMAP2. */
static int test_mmap_tracking(void)
{
	const char *plugin = env_path("WORKLOAD_PLUGIN");
	/* the dlopen comes 1.2 s in: the session started well before, however loaded the machine */
	pid_t pid = spawn(env_path("WORKLOAD_DLOPEN"), plugin, "2", "1.2", NULL);
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	SamplingOptions o = { .hz = 499, .duration_nanos = 3 * NSEC };
	const ProcessMaps *maps;
	const Profile *p;
	SamplingMetrics m;
	bool mapped = false, sampled = false;
	int r;

	wait_threads(pid, 1, "workload-dlopen");
	r = run_session(pid, &o, 0, &m, &s);
	reap_exited(pid);
	CHECK(r == 0, "run: %s", strerror(-r));
	maps = sampling_session_get_maps(s);
	for (size_t i = 0; i < maps->n_mappings; i++)
		if (maps->mappings[i].path && strstr(maps->mappings[i].path, "workload-plugin"))
			mapped = true;
	CHECK(mapped, "plugin mapping not learnt from MMAP2");
	CHECK(maps->generation > 1, "generation %llu", (unsigned long long)maps->generation);

	p = sampling_session_get_profile(s);
	for (uint32_t i = 0; i < p->n_frames; i++) {
		uint32_t module = p->frames[i].module;

		if (module != PROFILE_NONE && strstr(profile_string(p, module), "workload-plugin"))
			sampled = true;
	}
	CHECK(sampled, "no frame attributed to the plugin");
	CHECK(thread_count_in_profile(p) == 1, "threads %llu",
	      (unsigned long long)thread_count_in_profile(p));
	return test_result();
}

static int test_metrics_json(void)
{
	SamplingMetrics m = {
		.samples_captured = 90, .samples_dropped = 10, .threads_seen = 1,
		.threads_at_start = 2, .pause_nanos = 50, .duration_nanos = 100, .hz = 99,
		.backend = "perf-dwarf", .event = "cpu-clock", .end_reason = "duration",
	};
	_cleanup_free_ char *s = NULL;
	json_t *o;

	CHECK(sampling_metrics_thread_coverage(&m) == 0.5, "coverage");
	CHECK(sampling_metrics_overhead_ratio(&m) == 0.5, "overhead");
	CHECK(sampling_metrics_fidelity(&m) == 0.9, "fidelity");
	CHECK(sampling_metrics_format_json(&m, &s) == 0, "format");
	o = json_loads(s, 0, NULL);
	CHECK(o && json_integer_value(json_object_get(o, "samples_captured")) == 90 &&
		      json_real_value(json_object_get(o, "fidelity")) == 0.9 &&
		      json_is_false(json_object_get(o, "buffer_full")) &&
		      json_is_null(json_object_get(o, "pause_nanos_method")),
	      "json: %s", s);
	json_decref(o);
	return test_result();
}

int main(int argc, char **argv)
{
	static const TestCase cases[] = {
		{ "busy-two-threads", test_busy_two_threads },
		{ "late-thread", test_late_thread },
		{ "stop", test_stop },
		{ "clamp-hz", test_clamp_hz },
		{ "clamp-duration", test_clamp_duration },
		{ "buffer-full", test_buffer_full },
		{ "no-such-process", test_no_such_process },
		{ "target-exits", test_target_exits },
		{ "thread-id", test_thread_id },
		{ "lost", test_lost },
		{ "idle", test_idle },
		{ "events-and-backends", test_events_and_backends },
		{ "mmap-tracking", test_mmap_tracking },
		{ "metrics-json", test_metrics_json },
	};

	return test_run_case(argc, argv, cases, ELEMENTSOF(cases));
}
