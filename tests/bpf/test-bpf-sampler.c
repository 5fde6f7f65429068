/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-bpf-sampler CASE: the `bpf` backend of the engine against real
 * workloads, real perf events and real cgroups. Needs root. Workload paths
 * come from the environment (WORKLOAD_SPLIT_FP: the split workload built
 * with frame pointers; WORKLOAD_SYSCALLS).
 *
 *   split-vs-fp   bpf and perf-fp sample the same process at the same time, for
 *                 2 s of its CPU time: the 3:1 split of split_heavy/split_light
 *                 agrees within 5 points
 *   pid           one process, held before exec and sampled to its exit: samples
 *                 match its CPU time, both threads named; metrics of the backend
 *   target-exits  the target exits mid-session: the session ends, samples kept
 *   exec          the target execs mid-session: frames of both images named
 *   cgroup        two processes inside a cgroup (one started mid-session) and a
 *                 busy one outside: both inside, named, nothing of the outside
 *   system        the whole machine: the workload's hot function and a second
 *                 process (an idle machine may run nothing else), each with its
 *                 process; profd's own process left out
 *   buffer-full   a sample budget ends the session early, window and count agree
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf-sampler.h"
#include "cgroup-fixture.h"
#include "cleanup.h"
#include "sampling-session.h"
#include "sampling-target.h"
#include "stack-resolver.h"
#include "profile-query.h"
#include "test-util.h"
#include "workload-process.h"


/* Wait until pid runs the executable 'exe_substring' (it has exec'ed). */
static void wait_exec(pid_t pid, const char *exe_substring)
{
	wait_threads(pid, 1, exe_substring);
}

static double heavy_share(const Profile *p, uint32_t pid)
{
	uint64_t heavy = count_samples(p, pid, "split_heavy");
	uint64_t light = count_samples(p, pid, "split_light");

	return heavy + light ? (double)heavy / (double)(heavy + light) : 0.0;
}

typedef struct Run {
	SamplingTarget *target;
	BpfSampler *sampler;
	SamplingMetrics metrics;
} Run;

static void run_done(Run *r)
{
	bpf_sampler_free(r->sampler);
	sampling_target_free(r->target);
}

/* A bpf sampler of 'target' (taken) at hz for 'seconds', named by its own resolvers. */
static void run_new(Run *r, SamplingTarget *target, uint32_t hz, double seconds)
{
	SamplingOptions o = {
		.hz = hz,
		.duration_nanos = (uint64_t)(seconds * NSEC),
		.backend = "bpf",
	};
	int k;

	*r = (Run){ .target = target };
	k = bpf_sampler_new(target, &o, NULL, &r->sampler);
	if (k < 0) {
		fprintf(stderr, "cannot start bpf sampler: %s\n", strerror(-k));
		exit(EXIT_FAILURE);
	}
}

static void run_finish(Run *r)
{
	int k = bpf_sampler_run(r->sampler);

	CHECK(k == 0, "bpf_sampler_run: %s", strerror(-k));
	bpf_sampler_get_metrics(r->sampler, &r->metrics);
	printf("bpf: %" PRIu64 " samples, %" PRIu64 " dropped, %" PRIu64 " buckets, %" PRIu64
	       " truncated, %" PRIu64 " lost stacks, %" PRIu64 " processes, end %s\n",
	       r->metrics.samples_captured, r->metrics.samples_dropped,
	       r->metrics.aggregated_buckets, r->metrics.truncated_stacks, r->metrics.lost_stacks,
	       r->metrics.processes_seen, r->metrics.end_reason);
	/* where the sampler's CPU went: setup and naming are parts of it, and each took some */
	CHECK(r->metrics.bpf_setup_cpu_nanos > 0 && r->metrics.bpf_naming_cpu_nanos > 0 &&
		      r->metrics.bpf_setup_cpu_nanos + r->metrics.bpf_naming_cpu_nanos <=
			      r->metrics.collector_cpu_nanos,
	      "setup %" PRIu64 " ns + naming %" PRIu64 " ns of %" PRIu64 " ns",
	      r->metrics.bpf_setup_cpu_nanos, r->metrics.bpf_naming_cpu_nanos,
	      r->metrics.collector_cpu_nanos);
}

static SamplingTarget *pid_target(pid_t pid)
{
	SamplingTarget *t;

	if (sampling_target_new_pid(pid, &t) < 0)
		exit(EXIT_FAILURE);
	return t;
}

typedef struct FpRun {
	StackResolver *resolver;
	SamplingSession *session;
	BpfSampler *bpf;
	int result;
} FpRun;

static void *fp_thread(void *arg)
{
	FpRun *f = arg;

	f->result = sampling_session_run(f->session);
	return NULL;
}

/* The end of the split-vs-fp window: both samplers stop. */
static void stop_both(void *userdata)
{
	FpRun *f = userdata;

	sampling_session_stop(f->session);
	bpf_sampler_stop(f->bpf);
}

/*
 * The window is 2 s of the target's CPU time, ~2000 samples for each sampler
 * however loaded the machine: 5 points are then 3.6 standard errors of the
 * difference of two independent samplings of a 3:1 split, not chance.
 */
static int test_split_vs_fp(void)
{
	const char *split = env_path("WORKLOAD_SPLIT_FP");
	StackResolverOptions ro = { .mode = STACK_UNWIND_FP, .kernel = true };
	FpRun fp = {};
	/* durations: hang guards, the target's CPU time ends the window */
	SamplingOptions fo = { .hz = 999, .duration_nanos = 60 * NSEC, .backend = "perf-fp" };
	CpuCall window = { .fn = stop_both, .arg = &fp, .cpu.nanos = 2 * NSEC };
	double bpf_share, fp_share;
	pthread_t thread;
	pid_t pid;
	Run run;
	int k;

	pid = spawn(split, "300", "2", NULL);
	wait_threads(pid, 2, "workload-split-fp");

	k = stack_resolver_new(&ro, &fp.resolver);
	CHECK(k >= 0, "stack_resolver_new: %s", strerror(-k));
	fo.resolve = stack_resolver_resolve;
	fo.resolve_userdata = fp.resolver;
	k = sampling_session_new(pid, &fo, &fp.session);
	CHECK(k >= 0, "sampling_session_new: %s", strerror(-k));
	run_new(&run, pid_target(pid), 999, 60);
	fp.bpf = run.sampler;

	/* the same process, the same seconds: perf-fp on a thread of its own */
	k = sampling_session_start(fp.session);
	CHECK(k >= 0, "sampling_session_start: %s", strerror(-k));
	CHECK(bpf_sampler_start(run.sampler) >= 0, "bpf_sampler_start");
	window.cpu.pid = pid;
	cpu_call_start(&window);
	pthread_create(&thread, NULL, fp_thread, &fp);
	run_finish(&run);
	pthread_join(thread, NULL);
	cpu_call_join(&window);
	CHECK(fp.result == 0, "perf-fp session: %s", strerror(-fp.result));
	reap(pid);

	bpf_share = heavy_share(bpf_sampler_get_profile(run.sampler), 0);
	fp_share = heavy_share(sampling_session_get_profile(fp.session), 0);
	printf("split_heavy share: bpf %.3f, perf-fp %.3f (%" PRIu64 " and %zu samples)\n",
	       bpf_share, fp_share, run.metrics.samples_captured,
	       sampling_session_get_profile(fp.session)->n_samples);
	CHECK(strcmp(run.metrics.end_reason, "stopped") == 0, "bpf window ended by %s",
	      run.metrics.end_reason);
	CHECK(run.metrics.samples_captured >= 1000, "bpf samples %" PRIu64 " in 2 s of CPU time",
	      run.metrics.samples_captured);
	CHECK(sampling_session_get_profile(fp.session)->n_samples >= 1000,
	      "perf-fp samples %zu in 2 s of CPU time",
	      sampling_session_get_profile(fp.session)->n_samples);
	CHECK(fp_share > 0.5, "perf-fp sees the 3:1 split: %.3f", fp_share);
	CHECK(bpf_share - fp_share < 0.05 && fp_share - bpf_share < 0.05,
	      "bpf %.3f vs perf-fp %.3f: more than 5 points apart", bpf_share, fp_share);

	sampling_session_free(fp.session);
	stack_resolver_free(fp.resolver);
	run_done(&run);
	return test_result();
}

/*
 * The workload is held before exec, sampled from its first instruction to its
 * exit, and its whole CPU time (rusage) says how many samples to expect.
 */
static int test_pid(void)
{
	char *argv[] = { (char *)env_path("WORKLOAD_SPLIT_FP"), (char *)"1.5", (char *)"2", NULL };
	struct rusage ru;
	const Profile *p;
	double cpu;
	int go, status;
	pid_t pid;
	Run run;

	pid = spawn_held(argv, &go);
	run_new(&run, pid_target(pid), 199, 30);
	CHECK(bpf_sampler_start(run.sampler) >= 0, "start");
	CHECK(write(go, "x", 1) == 1, "release the workload");
	close(go);
	run_finish(&run);
	CHECK(wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "workload exit");
	cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	      ru.ru_stime.tv_usec / 1e6;
	p = bpf_sampler_get_profile(run.sampler);
	printf("target used %.3f s of CPU: %.0f samples expected at 199 Hz\n", cpu, cpu * 199);

	CHECK(strcmp(run.metrics.backend, "bpf") == 0, "backend %s", run.metrics.backend);
	CHECK(run.metrics.untimed, "bpf samples are untimed");
	CHECK(p->untimed && !p->multi_process && p->pid == (uint32_t)pid, "profile flags");
	CHECK(run.metrics.samples_captured == p->n_samples, "captured %" PRIu64 " vs %zu",
	      run.metrics.samples_captured, p->n_samples);
	/* one sample per period of the target's CPU time, give or take scheduling noise */
	CHECK(p->n_samples >= 20, "samples %zu", p->n_samples);
	CHECK(p->n_samples * 2 >= cpu * 199 && p->n_samples <= cpu * 199 * 1.5 + 10,
	      "samples %zu for %.3f s of target CPU", p->n_samples, cpu);
	CHECK(run.metrics.threads_seen == 2, "threads seen %" PRIu64, run.metrics.threads_seen);
	CHECK(count_samples(p, (uint32_t)pid, NULL) == p->n_samples, "every sample is the target's");
	/* exec'ed mid-session, yet named from its own image; frame pointers reach the roots */
	CHECK(count_samples(p, 0, "split_worker") * 10 >= p->n_samples * 9,
	      "split_worker in %" PRIu64 " of %zu", count_samples(p, 0, "split_worker"), p->n_samples);
	CHECK(run.metrics.truncated_stacks * 10 <= p->n_samples, "truncated %" PRIu64,
	      run.metrics.truncated_stacks);
	CHECK(run.metrics.samples_dropped == 0, "dropped %" PRIu64, run.metrics.samples_dropped);
	CHECK(strcmp(run.metrics.end_reason, "target-exited") == 0, "end %s", run.metrics.end_reason);
	CHECK(p->n_threads >= 2 && p->threads[0].name != PROFILE_NONE, "threads named");
	for (size_t i = 0; i < p->n_samples; i++)
		CHECK(p->samples[i].time_ns == 0, "sample %zu has a time", i);
	run_done(&run);
	return test_result();
}

/* The target exits once it ran 0.1 s sampled (~20 samples), however long that takes. */
static int test_target_exits(void)
{
	const char *split = env_path("WORKLOAD_SPLIT_FP");
	CpuCall exit_call = { .fn = kill_pid, .cpu.nanos = NSEC / 10 };
	pid_t pid;
	Run run;

	pid = spawn(split, "300", "1", NULL);
	wait_exec(pid, "workload-split-fp");
	/* 60 s: a window the target's exit must cut short */
	run_new(&run, pid_target(pid), 199, 60);
	CHECK(bpf_sampler_start(run.sampler) >= 0, "start");
	exit_call.arg = &pid;
	exit_call.cpu.pid = pid;
	cpu_call_start(&exit_call);
	run_finish(&run);
	cpu_call_join(&exit_call);
	reap(pid);
	CHECK(strcmp(run.metrics.end_reason, "target-exited") == 0, "end %s", run.metrics.end_reason);
	CHECK(run.metrics.duration_nanos < run.metrics.effective_duration_nanos,
	      "the session waited for its duration");
	CHECK(run.metrics.samples_captured > 0, "samples %" PRIu64, run.metrics.samples_captured);
	CHECK(count_samples(bpf_sampler_get_profile(run.sampler), 0, "split_heavy") > 0,
	      "split_heavy named although the process is gone");
	run_done(&run);
	return test_result();
}

/* A shell that runs the split workload, then execs the syscalls workload in the same process. */
static int test_exec(void)
{
	_cleanup_free_ char *script = NULL;
	const Profile *p;
	pid_t pid;
	Run run;

	if (asprintf(&script, "%s 1 1; exec %s 1", env_path("WORKLOAD_SPLIT_FP"),
		     env_path("WORKLOAD_SYSCALLS")) < 0)
		return EXIT_FAILURE;
	pid = spawn("/bin/sh", "-c", script, NULL);
	wait_exec(pid, "sh");
	run_new(&run, pid_target(pid), 199, 20);
	run_finish(&run);
	reap(pid);
	p = bpf_sampler_get_profile(run.sampler);
	/* the shell forks the split workload (not the target); then the target itself execs */
	CHECK(count_samples(p, (uint32_t)pid, "write_null") > 0, "write_null (after exec) named");
	CHECK(count_samples(p, (uint32_t)pid, "split_heavy") == 0,
	      "the forked child is not the target");
	CHECK(strcmp(run.metrics.end_reason, "target-exited") == 0, "end %s", run.metrics.end_reason);
	run_done(&run);
	return test_result();
}

static void stop_sampler(void *sampler)
{
	bpf_sampler_stop(sampler);
}

static int test_cgroup(void)
{
	_cleanup_(cgroup_fixture_done) CgroupFixture cg = {};
	const char *split = env_path("WORKLOAD_SPLIT_FP");
	SamplingTarget *target;
	CgroupLateJoin join = { .cg = &cg, .path = split, .stop = stop_sampler };
	pid_t inside, late, outside;
	const Profile *p;
	Run run;
	int k;

	cgroup_fixture_new(&cg);
	inside = cgroup_fixture_spawn(&cg, split, "300", "1", NULL);
	outside = spawn(split, "300", "1", NULL);
	wait_exec(inside, "workload-split-fp");
	wait_exec(outside, "workload-split-fp");

	k = sampling_target_new_cgroup(cg.name, &target);
	CHECK(k >= 0, "cgroup target '%s': %s", cg.name, strerror(-k));
	if (k < 0)
		return test_result();
	/* 60 s: a hang guard, the late one's CPU time ends the window */
	run_new(&run, target, 199, 60);
	CHECK(bpf_sampler_start(run.sampler) >= 0, "start");
	join.inside = inside;
	join.stop_arg = run.sampler;
	cgroup_late_join_start(&join);
	run_finish(&run);
	late = cgroup_late_join_finish(&join); /* joined mid-session */
	reap(inside);
	reap(outside);
	reap(late);

	p = bpf_sampler_get_profile(run.sampler);
	printf("inside %d: %" PRIu64 " samples, late %d: %" PRIu64 ", outside %d: %" PRIu64 "\n",
	       (int)inside, count_samples(p, (uint32_t)inside, NULL), (int)late,
	       count_samples(p, (uint32_t)late, NULL), (int)outside,
	       count_samples(p, (uint32_t)outside, NULL));
	CHECK(p->multi_process && p->pid == 0, "a multi-process profile");
	CHECK(count_samples(p, (uint32_t)inside, "split_heavy") > 0, "inside process named");
	CHECK(count_samples(p, (uint32_t)late, "split_heavy") > 0, "late process named");
	CHECK(count_samples(p, (uint32_t)outside, NULL) == 0, "nothing of the outside process");
	CHECK(process_name(p, (uint32_t)inside) &&
	      strcmp(process_name(p, (uint32_t)inside), "workload-split-") == 0,
	      "inside process name %s", process_name(p, (uint32_t)inside) ?: "(none)");
	CHECK(process_name(p, (uint32_t)late) &&
	      strcmp(process_name(p, (uint32_t)late), "workload-split-") == 0,
	      "late process name %s", process_name(p, (uint32_t)late) ?: "(none)");
	CHECK(strncmp(run.metrics.target, "cgroup:", 7) == 0 && strcmp(run.metrics.target + 7, cg.name) == 0,
	      "target %s", run.metrics.target);
	CHECK(run.metrics.processes_seen >= 2, "processes seen %" PRIu64, run.metrics.processes_seen);
	run_done(&run);
	return test_result();
}

static int test_system(void)
{
	const char *split = env_path("WORKLOAD_SPLIT_FP"), *sys = env_path("WORKLOAD_SYSCALLS");
	SamplingTarget *target;
	const Profile *p;
	pid_t a, b;
	Run run;

	/* they outlive the window however long a loaded machine takes to start it */
	a = spawn(split, "300", "1", NULL);
	b = spawn(sys, "300", NULL);
	wait_exec(a, "workload-split-fp");
	wait_exec(b, "workload-syscalls");
	if (sampling_target_new_system(NULL, 0, &target) < 0)
		return EXIT_FAILURE;
	run_new(&run, target, 99, 3);
	run_finish(&run);
	reap(a);
	reap(b);
	p = bpf_sampler_get_profile(run.sampler);

	CHECK(count_samples(p, (uint32_t)a, "split_heavy") > 0, "hot function of the workload");
	/* no frame pointers there: named by its process, its frames are what the walk found */
	CHECK(count_samples(p, (uint32_t)b, NULL) > 0, "the syscalls workload");
	CHECK(process_name(p, (uint32_t)b) &&
	      strcmp(process_name(p, (uint32_t)b), "workload-syscal") == 0,
	      "syscalls process name %s", process_name(p, (uint32_t)b) ?: "(none)");
	CHECK(count_samples(p, (uint32_t)getpid(), NULL) == 0, "the sampler's own process");
	for (uint32_t i = 0; i < p->n_threads; i++)
		CHECK(p->threads[i].pid != 0, "thread %u has no process", p->threads[i].tid);
	CHECK(strcmp(run.metrics.target, "system") == 0, "target %s", run.metrics.target);
	run_done(&run);
	return test_result();
}

static int test_buffer_full(void)
{
	const char *split = env_path("WORKLOAD_SPLIT_FP");
	/* a window far longer than the budget takes, however loaded the machine */
	SamplingOptions o = { .hz = 499, .duration_nanos = 60 * NSEC, .sample_budget = 300 };
	BpfSampler *s = NULL;
	SamplingTarget *target = NULL;
	SamplingMetrics m;
	pid_t pid;

	pid = spawn(split, "300", "2", NULL);
	wait_threads(pid, 2, "workload-split-fp");
	target = pid_target(pid);
	CHECK(bpf_sampler_new(target, &o, NULL, &s) >= 0, "new");
	CHECK(bpf_sampler_run(s) == 0, "run");
	reap(pid);
	bpf_sampler_get_metrics(s, &m);
	printf("buffer-full after %.2f s with %" PRIu64 " samples\n", m.duration_nanos / 1e9,
	       m.samples_captured);
	CHECK(m.buffer_full && strcmp(m.end_reason, "buffer-full") == 0, "end %s", m.end_reason);
	CHECK(m.samples_captured <= 300 + 8, "captured %" PRIu64 " (budget 300, a few in flight)",
	      m.samples_captured);
	CHECK(m.samples_captured >= 300, "captured %" PRIu64, m.samples_captured);
	/* 300 samples of 2 threads at 499 Hz take ~0.6 s of their CPU, far below 60 s */
	CHECK(m.duration_nanos < m.effective_duration_nanos, "window %" PRIu64, m.duration_nanos);
	bpf_sampler_free(s);
	sampling_target_free(target);
	return test_result();
}

int main(int argc, char **argv)
{
	static const TestCase cases[] = {
		{ "split-vs-fp", test_split_vs_fp },
		{ "pid", test_pid },
		{ "target-exits", test_target_exits },
		{ "exec", test_exec },
		{ "cgroup", test_cgroup },
		{ "system", test_system },
		{ "buffer-full", test_buffer_full },
	};

	return test_run_case(argc, argv, cases, ELEMENTSOF(cases));
}
