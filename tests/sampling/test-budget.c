/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-budget CASE: the sample budget of a session (sample_budget) and the
 * requested vs effective values it reports, against real workloads.
 *   grows     a target that starts a second thread: the default budget follows it
 *   ceiling   more busy threads than CPUs: the budget stops at what the event can
 *             produce, CPUs x (hz x seconds + 1)
 *   explicit  an explicit sample_budget stands when threads appear
 *   requested 0 = default is reported as requested 0; the effective values and
 *             clamped follow the default
 *   json-u64  the metrics JSON keeps every u64 exact, 2^64-1 included
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "sampling-request.h"
#include "sampling-session.h"
#include "test-util.h"
#include "workload-process.h"

static uint64_t online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint64_t)n : 1;
}

/* The default budget for 'threads' threads: min(threads, CPUs) x (ceil(hz x s) + 1). */
static uint64_t expected_budget(uint32_t hz, uint64_t duration_nanos, uint64_t threads)
{
	uint64_t slots = threads < online_cpus() ? threads : online_cpus();

	return slots * (((uint64_t)hz * duration_nanos + NSEC - 1) / NSEC + 1);
}

/*
 * Start the workload named by env_name with two arguments, wait until it runs
 * 'threads' threads, sample it with o until the window ends, and reap it.
 */
static int run(const char *env_name, const char *arg1, const char *arg2, unsigned threads,
	       const SamplingOptions *o, SamplingMetrics *m)
{
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	const char *path = env_path(env_name);
	pid_t pid = spawn(path, arg1, arg2, NULL);
	int r;

	wait_threads(pid, threads, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	r = sampling_session_new(pid, o, &s);
	if (r >= 0)
		r = sampling_session_run(s);
	if (s) {
		sampling_session_get_metrics(s, m);
		print_metrics(m);
	}
	reap(pid);
	return r;
}

static int test_grows(void)
{
	SamplingOptions o = { .hz = 99, .duration_nanos = 2500000000ULL };
	SamplingMetrics m;
	int r;

	/* one thread for 1 s (sampling is set up well before), then two until the end */
	r = run("WORKLOAD_LATE_THREAD", "5", "1", 1, &o, &m);
	CHECK(r == 0, "session failed: %s", strerror(-r));
	CHECK(m.threads_at_start == 1 && m.threads_peak == 2, "threads at start %llu, peak %llu",
	      (unsigned long long)m.threads_at_start, (unsigned long long)m.threads_peak);
	CHECK(m.sample_budget == expected_budget(99, o.duration_nanos, 2),
	      "budget %llu, expected %llu for two threads", (unsigned long long)m.sample_budget,
	      (unsigned long long)expected_budget(99, o.duration_nanos, 2));
	CHECK(!m.buffer_full && strcmp(m.end_reason, "duration") == 0,
	      "a second thread filled the budget (end %s)", m.end_reason);
	return test_result();
}

static int test_ceiling(void)
{
	SamplingOptions o = { .hz = 99, .duration_nanos = NSEC };
	uint64_t threads = online_cpus() + 2;
	char arg[24];
	SamplingMetrics m;
	int r;

	snprintf(arg, sizeof(arg), "%llu", (unsigned long long)threads);
	r = run("WORKLOAD_SPLIT", "4", arg, (unsigned)threads, &o, &m);
	CHECK(r == 0, "session failed: %s", strerror(-r));
	CHECK(m.threads_peak == threads, "peak %llu, expected %llu",
	      (unsigned long long)m.threads_peak, (unsigned long long)threads);
	CHECK(m.sample_budget == expected_budget(99, NSEC, online_cpus()),
	      "budget %llu for %llu threads on %llu CPUs, expected %llu",
	      (unsigned long long)m.sample_budget, (unsigned long long)threads,
	      (unsigned long long)online_cpus(),
	      (unsigned long long)expected_budget(99, NSEC, online_cpus()));
	CHECK(m.samples_captured <= m.sample_budget && !m.buffer_full,
	      "%llu samples of a budget of %llu (buffer_full %d)",
	      (unsigned long long)m.samples_captured, (unsigned long long)m.sample_budget,
	      m.buffer_full);
	return test_result();
}

static int test_explicit(void)
{
	SamplingOptions o = { .hz = 99, .duration_nanos = NSEC, .sample_budget = 1000000 };
	SamplingMetrics m;
	int r;

	r = run("WORKLOAD_LATE_THREAD", "3", "0.2", 1, &o, &m);
	CHECK(r == 0 && m.threads_peak == 2 && m.sample_budget == 1000000,
	      "r %d peak %llu: explicit budget %llu changed", r, (unsigned long long)m.threads_peak,
	      (unsigned long long)m.sample_budget);
	o.sample_budget_limit = 500;
	r = run("WORKLOAD_LATE_THREAD", "3", "0.2", 1, &o, &m);
	CHECK(r == 0 && m.sample_budget == 500, "r %d: budget %llu over the limit of 500", r,
	      (unsigned long long)m.sample_budget);
	return test_result();
}

static int test_requested(void)
{
	SamplingOptions o = { .max_duration_nanos = NSEC / 2 };
	SamplingRequest q;
	SamplingMetrics m;
	int r;

	/* the request every backend starts from (the bpf one reports it as is) */
	r = sampling_request_clamp(&o, &q);
	CHECK(r == 0 && q.requested_hz == 0 && q.requested_duration == 0 &&
		      q.hz == SAMPLING_DEFAULT_HZ && q.duration == NSEC / 2 && q.clamped,
	      "r %d: requested %u Hz, %llu ns -> %u Hz, %llu ns, clamped %d", r, q.requested_hz,
	      (unsigned long long)q.requested_duration, q.hz, (unsigned long long)q.duration,
	      q.clamped);

	r = run("WORKLOAD_SPLIT", "3", "1", 1, &o, &m);
	CHECK(r == 0, "session failed: %s", strerror(-r));
	CHECK(m.requested_hz == 0 && m.requested_duration_nanos == 0,
	      "defaults reported as requested %u Hz, %llu ns instead of 0", m.requested_hz,
	      (unsigned long long)m.requested_duration_nanos);
	CHECK(m.hz == SAMPLING_DEFAULT_HZ && m.effective_duration_nanos == NSEC / 2 && m.clamped,
	      "hz %u, duration %llu, clamped %d: the default 10 s should be clamped to 0.5 s", m.hz,
	      (unsigned long long)m.effective_duration_nanos, m.clamped);

	o = (SamplingOptions){ .duration_nanos = NSEC / 4 };
	r = run("WORKLOAD_SPLIT", "3", "1", 1, &o, &m);
	CHECK(r == 0 && m.requested_hz == 0 && m.hz == SAMPLING_DEFAULT_HZ && !m.clamped &&
		      m.requested_duration_nanos == NSEC / 4,
	      "r %d: requested %u Hz -> %u, clamped %d", r, m.requested_hz, m.hz, m.clamped);

	/* a saturated request (the daemon's usec -> ns of 2^64-1) is clamped, and says so */
	o = (SamplingOptions){ .hz = 99, .duration_nanos = UINT64_MAX, .max_duration_nanos = NSEC / 4 };
	r = run("WORKLOAD_SPLIT", "3", "1", 1, &o, &m);
	CHECK(r == 0 && m.requested_duration_nanos == UINT64_MAX && m.clamped &&
		      m.effective_duration_nanos == NSEC / 4,
	      "r %d: requested %llu, effective %llu, clamped %d", r,
	      (unsigned long long)m.requested_duration_nanos,
	      (unsigned long long)m.effective_duration_nanos, m.clamped);
	return test_result();
}

static int test_json_u64(void)
{
	SamplingMetrics m = {
		.requested_duration_nanos = UINT64_MAX,
		.sample_budget = (uint64_t)INT64_MAX + 1,
		.ring_bytes = INT64_MAX,
		.hz = 99,
		.duration_nanos = 1,
	};
	_cleanup_free_ char *json = NULL;

	CHECK(sampling_metrics_format_json(&m, &json) == 0, "format failed");
	CHECK(json && strstr(json, "\"requested_duration_nanos\": 18446744073709551615,") &&
		      strstr(json, "\"ring_capacity\": 9223372036854775808,") &&
		      strstr(json, "\"ring_bytes\": 9223372036854775807,"),
	      "u64 values not exact: %s", json);
	CHECK(json && json[strlen(json) - 1] == '\n' && json[strlen(json) - 2] == '}',
	      "no final newline after the object");
	return test_result();
}

int main(int argc, char **argv)
{
	static const TestCase cases[] = {
		{ "grows", test_grows },
		{ "ceiling", test_ceiling },
		{ "explicit", test_explicit },
		{ "requested", test_requested },
		{ "json-u64", test_json_u64 },
	};

	return test_run_case(argc, argv, cases, ELEMENTSOF(cases));
}
