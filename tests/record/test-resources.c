/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Resource snapshots of a live child process whose RSS, threads and CPU time
 * change on command, a RunRecorder over it, a child that has exited, and the
 * record's arithmetic (docs/record-format.md, "Arithmetic").
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "cleanup.h"
#include "record.h"
#include "record-test.h"
#include "time-util.h"

#define GROW_BYTES (48u << 20)
#define EXTRA_THREADS 3

static void *idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* The child: 'm' touches GROW_BYTES more, 't' starts threads, 'c' burns ~300 ms CPU. */
static _Noreturn void child(int in, int out)
{
	char c;

	while (read(in, &c, 1) == 1) {
		if (c == 'm') {
			char *p = mmap(NULL, GROW_BYTES, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				_exit(3);
			memset(p, 1, GROW_BYTES);
		} else if (c == 't') {
			for (int i = 0; i < EXTRA_THREADS; i++) {
				pthread_t t;

				if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
					_exit(4);
			}
		} else if (c == 'c') {
			uint64_t end = clock_nanos(CLOCK_PROCESS_CPUTIME_ID) + 300000000;

			while (clock_nanos(CLOCK_PROCESS_CPUTIME_ID) < end)
				;
		}
		if (write(out, &c, 1) != 1)
			_exit(5);
	}
	_exit(0);
}

static int to_child = -1, from_child = -1;

static void command(char c)
{
	char ack;

	if (write(to_child, &c, 1) != 1 || read(from_child, &ack, 1) != 1 || ack != c) {
		fprintf(stderr, "FAIL child did not acknowledge '%c'\n", c);
		exit(1);
	}
}

static ResourceSnapshot snapshot(pid_t pid, const char *when)
{
	ResourceSnapshot s = {};
	int r = resource_snapshot_read(pid, &s);

	CHECK(r == 0, "snapshot %s failed: %s", when, strerror(-r));
	CHECK(s.cpu_time_ms.set && s.resident_bytes.set && s.virtual_bytes.set &&
		      s.thread_count.set,
	      "snapshot %s incomplete", when);
	return s;
}

static void test_child(void)
{
	_cleanup_(run_recorder_freep) RunRecorder *rec = NULL;
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	ResourceSnapshot before, grown, threaded, burnt, gone = {};
	siginfo_t info = {};
	RunIdentity id;
	int down[2], up[2], status, r;
	pid_t pid;

	if (pipe2(down, O_CLOEXEC) < 0 || pipe2(up, O_CLOEXEC) < 0)
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		child(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	to_child = down[1];
	from_child = up[0];

	if (run_identity_new("profd test", "", "", "pid", "child", "perf-dwarf", &id) < 0)
		abort();
	r = run_recorder_new(pid, &id, &rec);
	CHECK(r == 0, "recorder failed: %s", strerror(-r));
	if (r < 0)
		return;

	before = snapshot(pid, "at start");
	CHECK(before.thread_count.value == 1, "child starts with %" PRIu64 " threads",
	      before.thread_count.value);

	command('m');
	CHECK(run_recorder_transition(rec, RUN_STATE_ACQUIRING) == 0, "transition failed");
	grown = snapshot(pid, "after growing");
	CHECK(grown.resident_bytes.value >= before.resident_bytes.value + GROW_BYTES - (1u << 20),
	      "RSS %" PRIu64 " -> %" PRIu64 " after touching %u bytes",
	      before.resident_bytes.value, grown.resident_bytes.value, GROW_BYTES);
	CHECK(grown.virtual_bytes.value >= before.virtual_bytes.value + GROW_BYTES,
	      "VmSize did not grow");

	command('t');
	CHECK(run_recorder_transition(rec, RUN_STATE_SCANNING) == 0, "transition failed");
	threaded = snapshot(pid, "after threads");
	CHECK(threaded.thread_count.value == 1 + EXTRA_THREADS, "threads %" PRIu64 ", expected %d",
	      threaded.thread_count.value, 1 + EXTRA_THREADS);

	command('c');
	CHECK(run_recorder_transition(rec, RUN_STATE_REPORTING) == 0, "transition failed");
	burnt = snapshot(pid, "after burning CPU");
	CHECK(burnt.cpu_time_ms.value >= threaded.cpu_time_ms.value + 250,
	      "cpu_time_ms %" PRIu64 " -> %" PRIu64 " after ~300 ms of work",
	      threaded.cpu_time_ms.value, burnt.cpu_time_ms.value);

	/* the record is of the child, not of this process */
	run_recorder_set_input(rec, 4096, 2);
	r = run_recorder_finish(rec, RUN_STATE_COMPLETED, &p);
	CHECK(r == 0, "finish failed: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(p->n_states == 4 && p->n_resource_samples == 5, "states %zu samples %zu", p->n_states,
	      p->n_resource_samples);
	if (p->n_states == 4) {
		CHECK(p->states[1].state == RUN_STATE_ACQUIRING &&
			      p->states[1].threads_start.value == 1 &&
			      p->states[1].threads_end.value == 1 + EXTRA_THREADS,
		      "scanning state threads %" PRIu64 "->%" PRIu64,
		      p->states[1].threads_start.value, p->states[1].threads_end.value);
		CHECK(p->states[0].resident_end_bytes.value >= p->states[0].resident_start_bytes.value +
									GROW_BYTES - (1u << 20),
		      "created state RSS did not grow");
		CHECK(p->states[2].cpu_time_ms.set && p->states[2].cpu_time_ms.value >= 250 &&
			      p->states[2].aggregate_cpu_milli_percent.set,
		      "scanning state CPU %" PRIu64 " ms", p->states[2].cpu_time_ms.value);
	}
	CHECK(p->resources.max_observed_threads.value == 1 + EXTRA_THREADS,
	      "max observed threads %" PRIu64, p->resources.max_observed_threads.value);
	CHECK(p->resources.max_observed_resident_bytes.value >= grown.resident_bytes.value - (1u << 20),
	      "max observed RSS too small");
	CHECK(p->input_bytes == 4096 && p->input_units == 2, "input totals not kept");

	/* exited but not reaped (a zombie), then reaped: -ESRCH, and a recorder records null snapshots */
	close(to_child);
	CHECK(waitid(P_PID, pid, &info, WEXITED | WNOWAIT) == 0, "waitid failed: %m");
	for (int reaped = 0; reaped < 2; reaped++) {
		const char *what = reaped ? "a reaped child" : "a zombie";

		if (reaped) {
			waitpid(pid, &status, 0);
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: status %d",
			      status);
		}
		gone = (ResourceSnapshot) {};
		r = resource_snapshot_read(pid, &gone);
		CHECK(r == -ESRCH, "snapshot of %s: expected -ESRCH, got %d (threads %s)", what, r,
		      gone.thread_count.set ? "set" : "null");
		if (run_identity_new("profd test", "", "", "pid", "child", "auto", &id) < 0)
			abort();
		run_recorder_free(TAKE_PTR(rec));
		CHECK(run_recorder_new(pid, &id, &rec) == 0, "recorder for %s failed", what);
		run_profile_free(TAKE_PTR(p));
		CHECK(run_recorder_finish(rec, RUN_STATE_FAILED, &p) == 0 &&
			      !p->resources.start.cpu_time_ms.set &&
			      !p->resources.start.resident_bytes.set &&
			      !p->resources.start.virtual_bytes.set &&
			      !p->resources.start.thread_count.set &&
			      !p->resources.max_observed_threads.set &&
			      !p->resources.aggregate_cpu_percent.set && p->n_states == 1 &&
			      !p->states[0].aggregate_cpu_milli_percent.set &&
			      !p->states[0].threads_start.set,
		      "%s did not give all-null resources", what);
	}
	close(from_child);
}

static void *spin_thread(void *arg)
{
	for (;;)
		;
	return arg;
}

/*
 * A live process whose main thread exited shows as a zombie in /proc/<pid>/stat,
 * but its other threads run: that is still an observation.
 */
static void test_leader_exited(void)
{
	ResourceSnapshot s = {};
	pid_t pid;
	int r = -1;

	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, spin_thread, NULL) != 0)
			_exit(4);
		pthread_exit(NULL);
	}
	/* until the main thread is gone (state Z) while the other one spins */
	for (int i = 0; i < 500; i++) {
		char path[64], stat[512] = "";
		_cleanup_fclose_ FILE *f = NULL;
		const char *state;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
		f = fopen(path, "re");
		if (f && fgets(stat, sizeof(stat), f) && (state = strrchr(stat, ')')) &&
		    state[2] == 'Z')
			break;
		usleep(10000);
	}
	r = resource_snapshot_read(pid, &s);
	CHECK(r == 0 && s.thread_count.set && s.thread_count.value == 2 && s.cpu_time_ms.set,
	      "a process whose main thread exited is still observed: r=%d threads %s %" PRIu64, r,
	      s.thread_count.set ? "set" : "null", s.thread_count.value);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_self(void)
{
	ResourceSnapshot s = snapshot(0, "of self");

	CHECK(s.resident_bytes.value > 0 && s.virtual_bytes.value >= s.resident_bytes.value,
	      "self RSS %" PRIu64 " VmSize %" PRIu64, s.resident_bytes.value, s.virtual_bytes.value);
	CHECK(resource_snapshot_read(getpid(), &s) == 0, "snapshot by own pid failed");
}

static void test_arithmetic(void)
{
	OptU64 m;
	OptF64 f;

	/* the numbers of valid/full.json, as its reference implementation computed them */
	m = resource_cpu_milli_percent(OPT_U64(0), OPT_U64(1), 1250000);
	CHECK(m.set && m.value == 80000, "1 ms over 1.25 ms: %" PRIu64, m.value);
	m = resource_cpu_milli_percent(OPT_U64(160), OPT_U64(15160), 1900000000);
	CHECK(m.set && m.value == 789473, "15 s over 1.9 s: %" PRIu64, m.value);
	m = resource_cpu_milli_percent(OPT_U64(15160), OPT_U64(15200), 48623456);
	CHECK(m.set && m.value == 82264, "40 ms over 48.6 ms: %" PRIu64, m.value);
	f = resource_cpu_percent(OPT_U64(120), OPT_U64(15200), 1990123456);
	CHECK(f.set && f.value == 15080.0 * 100.0 / 1990.123456, "aggregate %.17g", f.value);

	/* u128 intermediate, saturating like u64::try_from(..).unwrap_or(MAX) */
	m = resource_cpu_milli_percent(OPT_U64(0), OPT_U64(UINT64_MAX), 1);
	CHECK(m.set && m.value == UINT64_MAX, "overflow not saturated");
	m = resource_cpu_milli_percent(OPT_U64(0), OPT_U64(UINT64_MAX / 1000), UINT64_MAX);
	CHECK(m.set && m.value == 99999999, "u128 product wrong: %" PRIu64, m.value);

	/* none when a side is missing, time runs backwards, or no time passed */
	CHECK(!resource_cpu_milli_percent((OptU64) {}, OPT_U64(1), 1).set, "missing start");
	CHECK(!resource_cpu_milli_percent(OPT_U64(2), OPT_U64(1), 1).set, "backwards cpu");
	CHECK(!resource_cpu_milli_percent(OPT_U64(1), OPT_U64(2), 0).set, "zero elapsed");
	CHECK(!resource_cpu_percent(OPT_U64(1), OPT_U64(2), 0).set, "zero wall");
	CHECK(!resource_cpu_percent(OPT_U64(1), (OptU64) {}, 5).set, "missing finish");
}

int main(void)
{
	test_arithmetic();
	test_self();
	test_child();
	test_leader_exited();
	return test_result();
}
