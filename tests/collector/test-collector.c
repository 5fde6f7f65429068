/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-collector CASE: the Collector (a sampling session and its resolver on
 * threads of their own) against real workloads with real perf events.
 * Workload paths come from the environment (WORKLOAD_SPLIT, SLEEP_PROGRAM).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "collector.h"
#include "default-resolver.h"
#include "dwarf-unwind.h"
#include "test-util.h"
#include "time-util.h"
#include "workload-process.h"

/*
 * A resolver slower than sampling: the default one after a sleep (longer the first time).
 * With 'hold', the first call waits until hold(hold_userdata) is true: a stall that lasts
 * until the target has done something, however long a loaded machine takes to let it.
 */
typedef struct SlowResolver {
	FrameCache *cache;
	unsigned first_delay_us, delay_us;
	unsigned calls;
	bool (*hold)(void *userdata);
	void *hold_userdata;
} SlowResolver;

static int slow_resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			Profile *profile, SampleStack *ret)
{
	SlowResolver *r = userdata;

	if (r->calls == 0 && r->hold && !test_wait_until(60, r->hold, r->hold_userdata))
		fprintf(stderr, "the resolver's hold never ended\n");
	usleep(r->calls++ == 0 ? r->first_delay_us : r->delay_us);
	return default_resolve_sample(r->cache, sample, maps, profile, ret);
}

static void slow_resolver_init(SlowResolver *r, CollectorOptions *o, unsigned first_delay_us,
			       unsigned delay_us)
{
	*r = (SlowResolver){ .first_delay_us = first_delay_us, .delay_us = delay_us };
	if (frame_cache_new(&r->cache) < 0)
		abort();
	o->sampling.resolve = slow_resolve;
	o->sampling.resolve_userdata = r;
}

/*
 * New, start, wait; the metrics and the profile. *ret_cpu_at_start: the CPU time the target
 * had used when the window began (what it ran before is not the window's to sample).
 */
static int collect(pid_t pid, const CollectorOptions *o, SamplingMetrics *m, Profile **ret_profile,
		   uint64_t *ret_cpu_at_start)
{
	_cleanup_collector_ Collector *c = NULL;
	int r;

	r = collector_new(pid, o, &c);
	if (r < 0)
		return r;
	if (ret_cpu_at_start)
		*ret_cpu_at_start = target_cpu_nanos(pid);
	r = collector_start(c);
	if (r >= 0)
		r = collector_wait(c);
	collector_get_metrics(c, m);
	print_metrics(m);
	if (ret_profile)
		*ret_profile = collector_steal_profile(c);
	return r;
}

static bool profile_has_function(const Profile *p, const char *prefix)
{
	for (uint32_t i = 0; i < p->n_frames; i++)
		if (strncmp(profile_string(p, p->frames[i].function), prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

/* A collector of workload-split 'pid' once it runs one thread; NULL (and 'pid' reaped) on failure. */
static Collector *new_split_collector(pid_t pid, const CollectorOptions *o)
{
	Collector *c = NULL;
	int r;

	wait_threads(pid, 1, "workload-split");
	r = collector_new(pid, o, &c);
	CHECK(r == 0, "new: %s", strerror(-r));
	if (r < 0)
		reap(pid);
	return c;
}

static int test_busy_two_threads(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "3", "2", NULL);
	_cleanup_profile_ Profile *p = NULL;
	CollectorOptions o = { .sampling = { .hz = 999 } };
	SamplingMetrics m;
	uint64_t cpu_before = 0, expected;
	int r;

	wait_threads(pid, 2, "workload-split");
	r = collect(pid, &o, &m, &p, &cpu_before);
	expected = (reap_exited(pid) - cpu_before) * 999 / NSEC;
	CHECK(r == 0, "collect: %s", strerror(-r));
	CHECK(p != NULL, "no profile");
	if (!p)
		return test_result();
	CHECK(m.samples_captured * 10 >= expected * 9, "captured %llu < 90%% of %llu",
	      (unsigned long long)m.samples_captured, (unsigned long long)expected);
	CHECK(m.samples_dropped == 0 && m.backlog_dropped == 0, "dropped %llu (backlog %llu)",
	      (unsigned long long)m.samples_dropped, (unsigned long long)m.backlog_dropped);
	CHECK(p->n_samples == m.samples_captured, "profile %zu samples, metrics %llu", p->n_samples,
	      (unsigned long long)m.samples_captured);
	CHECK(m.threads_seen == 2 && m.threads_at_start == 2, "threads seen %llu at start %llu",
	      (unsigned long long)m.threads_seen, (unsigned long long)m.threads_at_start);
	CHECK(strcmp(m.end_reason, "target-exited") == 0, "end_reason %s", m.end_reason);
	CHECK(m.backlog_bytes >= 1024 * 1024 && m.backlog_peak_bytes > 0 &&
		      m.backlog_peak_bytes <= m.backlog_bytes, "backlog %llu peak %llu",
	      (unsigned long long)m.backlog_bytes, (unsigned long long)m.backlog_peak_bytes);
	CHECK(m.collector_cpu_nanos > 0, "collector_cpu_nanos 0");
	/* the StackResolver unwound through the workload's own functions */
	CHECK(profile_has_function(p, "split_"), "no split_* frame in the profile");
	CHECK(p->n_threads >= 2, "%u threads named", p->n_threads);
	CHECK(p->duration_nanos == m.duration_nanos, "profile duration %llu, metrics %llu",
	      (unsigned long long)p->duration_nanos, (unsigned long long)m.duration_nanos);
	return test_result();
}

static void stop_collector(void *collector)
{
	collector_stop(collector);
}

static int test_stop_from_thread(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "300", "1", NULL);
	CollectorOptions o = { .sampling = { .hz = 999 } };
	_cleanup_collector_ Collector *c = new_split_collector(pid, &o);
	SamplingMetrics m;
	DelayedCall stopper;
	int r;

	if (!c)
		return test_result();
	CHECK(collector_start(c) == 0, "start");
	stopper = (DelayedCall){ .fn = stop_collector, .arg = c, .after_nanos = NSEC / 2 };
	delayed_call_start(&stopper);
	r = collector_wait(c);
	delayed_call_join(&stopper);
	reap(pid);
	collector_get_metrics(c, &m);
	print_metrics(&m);
	CHECK(r == 0, "wait: %s", strerror(-r));
	CHECK(strcmp(m.end_reason, "stopped") == 0, "end_reason %s", m.end_reason);
	/*
	 * The window ran until the stop came and ended soon after, measured from the stop call
	 * itself (a loaded machine wakes the stopper late: the window is longer, rightly); a
	 * stop not acted on runs the 10 s default window (its target outlives it).
	 */
	{
		int64_t latency = (int64_t)(m.start_unix_nanos + m.duration_nanos) -
				  (int64_t)stopper.called_unix_nanos;

		CHECK(latency >= -1000000 && latency <= (int64_t)(5 * NSEC / 2),
		      "the window ended %.3f s after the stop call (duration %.3f s)",
		      (double)latency / 1e9, (double)m.duration_nanos / 1e9);
	}
	CHECK(m.samples_captured > 0, "nothing captured");
	CHECK(collector_is_finished(c), "not finished after wait");
	return test_result();
}

static int test_stop_before_start(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "300", "1", NULL);
	CollectorOptions o = { .sampling = { .hz = 999 } };
	Collector *c = new_split_collector(pid, &o);
	_cleanup_profile_ Profile *p = NULL;
	SamplingMetrics m;
	int r;

	if (!c)
		return test_result();
	/* stopped, then started: the window closes at once */
	collector_stop(c);
	CHECK(collector_start(c) == 0, "start");
	r = collector_wait(c);
	collector_get_metrics(c, &m);
	print_metrics(&m);
	CHECK(r == 0, "wait: %s", strerror(-r));
	CHECK(strcmp(m.end_reason, "stopped") == 0, "end_reason %s", m.end_reason);
	CHECK(m.duration_nanos < NSEC, "duration %llu", (unsigned long long)m.duration_nanos);
	p = collector_steal_profile(c);
	CHECK(p && p->n_samples == m.samples_captured, "profile %zu, captured %llu",
	      p ? p->n_samples : 0, (unsigned long long)m.samples_captured);
	collector_free(c);

	/* never started: waiting returns, and freeing ends the idle threads */
	CHECK(collector_new(pid, &o, &c) == 0, "new");
	CHECK(collector_wait(c) == 0, "wait without start");
	CHECK(collector_is_finished(c), "not finished");
	collector_free(c);
	CHECK(collector_new(pid, &o, &c) == 0, "new");
	collector_free(c);
	reap(pid);
	return test_result();
}

static bool process_gone(void *userdata)
{
	return kill(*(pid_t *)userdata, 0) < 0 && errno == ESRCH;
}

/*
 * The target exits while the backlog is full of its records: every one of them still
 * reaches the profile. The resolver holds its first sample until the target is gone (and
 * takes 4 ms a sample after), so records wait in the backlog at the exit however the
 * machine shares its CPUs; the target exits (is killed) once it has run 0.2 s.
 */
static int test_target_exit_mid_drain(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "30", "1", NULL);
	_cleanup_collector_ Collector *c = NULL;
	_cleanup_profile_ Profile *p = NULL;
	CollectorOptions o = { .sampling = { .hz = 999 } };
	SlowResolver slow;
	SamplingMetrics m;
	CpuSince used;
	bool finished_at_exit;
	int r;

	slow_resolver_init(&slow, &o, 0, 4000);
	slow.hold = process_gone;
	slow.hold_userdata = &pid;
	c = new_split_collector(pid, &o);
	if (!c) {
		frame_cache_free(slow.cache);
		return test_result();
	}
	CHECK(collector_start(c) == 0, "start");
	used = (CpuSince){ .pid = pid, .since = target_cpu_nanos(pid), .nanos = NSEC / 5 };
	CHECK(test_wait_until(30, cpu_used, &used), "the target never used 0.2 s of CPU");
	reap(pid);
	finished_at_exit = collector_is_finished(c);
	r = collector_wait(c);
	collector_get_metrics(c, &m);
	print_metrics(&m);
	p = collector_steal_profile(c);
	CHECK(r == 0, "wait: %s", strerror(-r));
	CHECK(!finished_at_exit, "finished when the target exited: nothing was pending");
	CHECK(strcmp(m.end_reason, "target-exited") == 0, "end_reason %s", m.end_reason);
	CHECK(m.samples_captured > 0 && p && p->n_samples == m.samples_captured,
	      "profile %zu, captured %llu", p ? p->n_samples : 0,
	      (unsigned long long)m.samples_captured);
	CHECK(slow.calls == m.samples_captured, "resolved %u of %llu", slow.calls,
	      (unsigned long long)m.samples_captured);
	CHECK(m.backlog_dropped == 0, "backlog dropped %llu", (unsigned long long)m.backlog_dropped);
	frame_cache_free(slow.cache);
	return test_result();
}

static int test_budget(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "20", "1", NULL);
	_cleanup_profile_ Profile *p = NULL;
	CollectorOptions o = { .sampling = { .hz = 999, .duration_nanos = 20 * NSEC,
					     .sample_budget = 100 } };
	SamplingMetrics m;
	uint64_t cpu = 0;
	int r;

	wait_threads(pid, 1, "workload-split");
	r = collect(pid, &o, &m, &p, &cpu);
	cpu = target_cpu_nanos(pid) - cpu;
	reap(pid);
	CHECK(r == 0, "collect: %s", strerror(-r));
	CHECK(m.buffer_full && strcmp(m.end_reason, "buffer-full") == 0, "buffer_full %d end %s",
	      m.buffer_full, m.end_reason);
	CHECK(m.samples_captured == 100 && p && p->n_samples == 100, "captured %llu profile %zu",
	      (unsigned long long)m.samples_captured, p ? p->n_samples : 0);
	/*
	 * 100 samples at 999 Hz are 0.1 s of the target's CPU time: the window ended there, not
	 * after the 20 s asked; counted in the target's CPU time, which load does not stretch
	 */
	CHECK(cpu < NSEC, "the target used %.3f s of CPU time in the window (%.3f s long)",
	      (double)cpu / 1e9, (double)m.duration_nanos / 1e9);
	return test_result();
}

/* A stall of the first unwind (a cold cache) is absorbed: nothing is lost. */
static int test_stall_absorbed(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "30", "2", NULL);
	_cleanup_profile_ Profile *p = NULL;
	CollectorOptions o = { .sampling = { .hz = 999, .duration_nanos = 2 * NSEC } };
	SlowResolver slow;
	SamplingMetrics m;
	uint64_t stalled = 0;
	int r;

	slow_resolver_init(&slow, &o, 500000, 0);
	wait_threads(pid, 2, "workload-split");
	r = collect(pid, &o, &m, &p, NULL);
	reap(pid);
	CHECK(r == 0, "collect: %s", strerror(-r));
	CHECK(m.samples_dropped == 0 && m.backlog_dropped == 0 && m.lost_samples == 0,
	      "dropped %llu (backlog %llu, lost %llu)", (unsigned long long)m.samples_dropped,
	      (unsigned long long)m.backlog_dropped, (unsigned long long)m.lost_samples);
	CHECK(p && p->n_samples == m.samples_captured && m.samples_captured > 0,
	      "profile %zu captured %llu", p ? p->n_samples : 0,
	      (unsigned long long)m.samples_captured);
	/* the samples of the stall's first 0.4 s were all waiting in the backlog at once */
	for (size_t i = 0; p && i < p->n_samples; i++)
		stalled += p->samples[i].time_ns < 4 * NSEC / 10;
	CHECK(m.backlog_peak_bytes >= (stalled - 1) * SAMPLING_DEFAULT_STACK_BYTES,
	      "backlog peak %llu for %llu samples taken during the stall",
	      (unsigned long long)m.backlog_peak_bytes, (unsigned long long)stalled);
	CHECK(stalled > 8, "only %llu samples during the stall", (unsigned long long)stalled);
	frame_cache_free(slow.cache);
	return test_result();
}

/*
 * Only the backlog's cap drops samples, and they are counted as such. The resolver holds its
 * first sample until the target has run 0.3 s (or ~300 samples, the 1 MiB backlog holds ~60)
 * however the machine shares its CPUs, and takes 5 ms a sample after.
 */
static int test_backlog_full(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "30", "2", NULL);
	_cleanup_profile_ Profile *p = NULL;
	CollectorOptions o = { .sampling = { .hz = 999, .duration_nanos = 2 * NSEC },
			       .max_backlog_bytes = 1 };
	SlowResolver slow;
	SamplingMetrics m;
	CpuSince used = { .pid = pid, .nanos = 3 * NSEC / 10 };
	int r;

	slow_resolver_init(&slow, &o, 0, 5000);
	slow.hold = cpu_used;
	slow.hold_userdata = &used;
	wait_threads(pid, 2, "workload-split");
	r = collect(pid, &o, &m, &p, &used.since);
	reap(pid);
	CHECK(r == 0, "collect: %s", strerror(-r));
	CHECK(m.backlog_bytes == 1024 * 1024, "backlog %llu, wanted the 1 MiB minimum",
	      (unsigned long long)m.backlog_bytes);
	CHECK(m.backlog_dropped > 0, "nothing dropped at the cap");
	CHECK(m.samples_dropped == m.lost_samples + m.throttled_samples + m.backlog_dropped,
	      "dropped %llu", (unsigned long long)m.samples_dropped);
	CHECK(p && p->n_samples == m.samples_captured, "profile %zu captured %llu",
	      p ? p->n_samples : 0, (unsigned long long)m.samples_captured);
	CHECK(sampling_metrics_fidelity(&m) < 1.0, "fidelity %f", sampling_metrics_fidelity(&m));
	frame_cache_free(slow.cache);
	return test_result();
}

/* The check refuses from its n-th call on; remembers when the last good call began. */
typedef struct Check {
	unsigned calls, fail_from;
	uint64_t last_good;
} Check;

static int check_target(void *userdata)
{
	Check *ck = userdata;
	uint64_t t = clock_nanos(CLOCK_MONOTONIC);

	if (++ck->calls >= ck->fail_from)
		return -EPERM;
	ck->last_good = t;
	return 0;
}

static int test_check_cutoff(void)
{
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "300", "2", NULL);
	_cleanup_profile_ Profile *p = NULL;
	Check ck = { .fail_from = 8 };
	/* 60 s: a hang guard the failing check must cut short, however slow its calls come */
	CollectorOptions o = { .sampling = { .hz = 999, .duration_nanos = 60 * NSEC },
			       .check = check_target, .check_userdata = &ck };
	SamplingMetrics m;
	uint64_t latest = 0;
	Collector *c = NULL;
	int r;

	wait_threads(pid, 2, "workload-split");
	r = collect(pid, &o, &m, &p, NULL);
	CHECK(r == 0, "collect: %s", strerror(-r));
	CHECK(ck.calls == ck.fail_from, "check called %u times", ck.calls);
	CHECK(strcmp(m.end_reason, "credentials-changed") == 0, "end_reason %s", m.end_reason);
	CHECK(p && p->n_samples == m.samples_captured && m.samples_captured > 0,
	      "profile %zu captured %llu", p ? p->n_samples : 0,
	      (unsigned long long)m.samples_captured);
	/* nothing after the last good check: every sample lies within the window kept */
	for (size_t i = 0; p && i < p->n_samples; i++)
		if (p->samples[i].time_ns > latest)
			latest = p->samples[i].time_ns;
	CHECK(latest <= m.duration_nanos, "a sample at %llu ns, the window kept is %llu ns",
	      (unsigned long long)latest, (unsigned long long)m.duration_nanos);
	CHECK(m.samples_after_cutoff > 0, "no sample was drained after the cut-off");
	CHECK(m.duration_nanos < m.effective_duration_nanos, "duration %llu",
	      (unsigned long long)m.duration_nanos);

	/* refused from the first check: start fails and nothing is sampled */
	ck = (Check){ .fail_from = 1 };
	CHECK(collector_new(pid, &o, &c) == 0, "new");
	r = collector_start(c);
	CHECK(r == -EPERM, "start with a refusing check: %d", r);
	collector_free(c);
	reap(pid);
	return test_result();
}

static int write_string(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		return -errno;
	return 0;
}

static unsigned count_fds(void)
{
	char fn[64];
	unsigned n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(fn, sizeof(fn), "/proc/self/fd/%d", fd);
		n += access(fn, F_OK) == 0;
	}
	return n;
}

/*
 * A thread that cannot start (a pids cgroup allows this process 'threads' more tasks): the
 * error comes back, the events are closed, and the threads that did start are ended.
 */
static void thread_start_failure(pid_t pid, const char *cgroup, unsigned threads)
{
	CollectorOptions o = { .sampling = { .hz = 99 } };
	Collector *c = NULL;
	char path[256], max[16];
	unsigned fds = count_fds();
	int r;

	snprintf(path, sizeof(path), "%s/pids.max", cgroup);
	snprintf(max, sizeof(max), "%u", 1 + threads);
	CHECK(write_string(path, max) == 0, "cannot set %s: %m", path);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	CHECK(write_string(path, "0") == 0, "cannot enter %s: %m", cgroup);
	r = collector_new(pid, &o, &c);
	CHECK(write_string("/sys/fs/cgroup/pids/cgroup.procs", "0") == 0, "cannot leave %s: %m",
	      cgroup);
	CHECK(r == -EAGAIN, "%u thread(s) allowed: got %d (%s), wanted -EAGAIN", threads, r,
	      strerror(-r));
	CHECK(c == NULL, "collector returned on failure");
	collector_free(c);
	CHECK(count_fds() == fds, "%u fds before, %u after", fds, count_fds());
}

static int test_thread_start_failure(void)
{
	pid_t pid = spawn(env_path("SLEEP_PROGRAM"), "30", NULL);
	char cgroup[128];

	wait_threads(pid, 1, "sleep");
	snprintf(cgroup, sizeof(cgroup), "/sys/fs/cgroup/pids/profd-test-collector-%d", (int)getpid());
	if (mkdir(cgroup, 0755) < 0) {
		CHECK(false, "this test needs the pids cgroup controller: cannot create %s: %m",
		      cgroup);
		reap(pid);
		return test_result();
	}
	thread_start_failure(pid, cgroup, 0); /* the unwind thread */
	thread_start_failure(pid, cgroup, 1); /* the drain thread, after the unwind thread */
	if (rmdir(cgroup) < 0)
		fprintf(stderr, "cannot remove %s: %m\n", cgroup);
	reap(pid);
	return test_result();
}

/*
 * A consumer elsewhere (the daemon's unwinder, which a hostile target may have
 * taken over) says what stack copy its walks needed: the collector keeps only
 * what could be true (twice the copy at most, UNWIND_STACK_MIN at least, whole
 * u64 words, the kernel's limit); the copy itself is the smaller of the two sizes.
 */
static int test_consumer_stack_needed(void)
{
	static const struct {
		uint32_t stack_bytes, copy, reported;
		uint32_t copied, kept;
	} cases[] = {
		{ 0, 4096, UINT32_MAX, 4096, 8192 },
		{ 0, 4096, 1, 4096, UNWIND_STACK_MIN },
		{ 0, 4096, 3001, 4096, 3008 },
		{ 0, 4096, 0, 4096, 0 },
		{ 0, 3001, 5000, 3008, 5000 },
		{ 4096, 8192, 6000, 4096, 6000 },
		{ SAMPLING_MAX_STACK_BYTES, 0, UINT32_MAX, SAMPLING_MAX_STACK_BYTES,
		  SAMPLING_MAX_STACK_BYTES },
	};
	pid_t pid = spawn(env_path("WORKLOAD_SPLIT"), "300", "1", NULL);

	wait_threads(pid, 1, "workload-split");
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		CollectorOptions o = {
			.sampling = { .hz = 99, .stack_bytes = cases[i].stack_bytes,
				      .stack_bytes_copy = cases[i].copy },
			.unwind_elsewhere = true,
		};
		_cleanup_collector_ Collector *c = NULL;
		SamplingMetrics m;
		int r;

		r = collector_new(pid, &o, &c);
		CHECK(r == 0, "case %zu: new: %s", i, strerror(-r));
		if (r < 0)
			continue;
		collector_stop(c);
		CHECK(collector_start(c) == 0, "case %zu: start", i);
		r = collector_consumer_done(c, &(ProfileBuilderStats){ 0 }, 0, false, cases[i].reported, 0);
		CHECK(r == 0, "case %zu: consumer_done: %s", i, strerror(-r));
		CHECK(collector_wait(c) == 0, "case %zu: wait", i);
		collector_get_metrics(c, &m);
		CHECK(m.requested_stack_bytes == cases[i].stack_bytes && m.stack_bytes == cases[i].copied,
		      "case %zu: requested %u copied %u, want %u", i, m.requested_stack_bytes,
		      m.stack_bytes, cases[i].copied);
		CHECK(m.stack_bytes_needed == cases[i].kept, "case %zu: reported %u, kept %u, want %u",
		      i, cases[i].reported, m.stack_bytes_needed, cases[i].kept);
	}
	reap(pid);
	return test_result();
}

int main(int argc, char **argv)
{
	static const TestCase cases[] = {
		{ "busy-two-threads", test_busy_two_threads },
		{ "stop-from-thread", test_stop_from_thread },
		{ "stop-before-start", test_stop_before_start },
		{ "target-exit-mid-drain", test_target_exit_mid_drain },
		{ "budget", test_budget },
		{ "stall-absorbed", test_stall_absorbed },
		{ "backlog-full", test_backlog_full },
		{ "check-cutoff", test_check_cutoff },
		{ "thread-start-failure", test_thread_start_failure },
		{ "consumer-stack-needed", test_consumer_stack_needed },
	};

	return test_run_case(argc, argv, cases, ELEMENTSOF(cases));
}
