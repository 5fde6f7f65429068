/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Building a run record for one process: transitions with resource snapshots
 * of that process, then the per-state measurements and resource usage
 * (docs/record-format.md, "Arithmetic").
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "assert-return.h"
#include "cleanup.h"
#include "record.h"
#include "time-util.h"

struct RunRecorder {
	pid_t pid;
	bool of_cgroup; /* resources from cgroup_fd (-1: none) instead of the pid */
	int cgroup_fd;
	RunIdentity identity;
	uint64_t started_ns;
	ResourceSnapshot at_start;
	StateTransition *transitions;
	ResourceSample *samples;
	size_t n; /* transitions and samples go in pairs */
	size_t transitions_allocated, samples_allocated;
	uint64_t input_bytes, input_units;
	bool finished;
};

/* A process (or cgroup) that is gone, a zombie or unreadable gives an all-null snapshot. */
static ResourceSnapshot snapshot_of(const RunRecorder *r)
{
	ResourceSnapshot s = {};

	if (!r->of_cgroup)
		(void) resource_snapshot_read(r->pid, &s);
	else if (r->cgroup_fd >= 0)
		(void) resource_snapshot_read_cgroup(r->cgroup_fd, &s);
	return s;
}

static int record_transition(RunRecorder *r, RunState state, uint64_t elapsed_ns,
			     ResourceSnapshot snapshot)
{
	int k;

	k = ARRAY_RESERVE(r->transitions, r->transitions_allocated, r->n + 1, 8);
	if (k >= 0)
		k = ARRAY_RESERVE(r->samples, r->samples_allocated, r->n + 1, 8);
	if (k < 0)
		return k;
	r->transitions[r->n] = (StateTransition) { .state = state, .elapsed_ns = elapsed_ns };
	r->samples[r->n] = (ResourceSample) {
		.state = state,
		.elapsed_ns = elapsed_ns,
		.snapshot = snapshot,
	};
	r->n++;
	return 0;
}

static int recorder_new(pid_t pid, int cgroup_fd, bool of_cgroup, RunIdentity *identity,
			RunRecorder **ret)
{
	_cleanup_(run_recorder_freep) RunRecorder *r = NULL;
	int k;

	assert_return(identity && ret, -EINVAL);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pid = pid;
	r->of_cgroup = of_cgroup;
	r->cgroup_fd = -1;
	if (cgroup_fd >= 0) {
		r->cgroup_fd = fcntl(cgroup_fd, F_DUPFD_CLOEXEC, 3);
		if (r->cgroup_fd < 0)
			return negative_errno();
	}
	r->started_ns = clock_nanos(CLOCK_MONOTONIC);
	r->at_start = snapshot_of(r);
	k = record_transition(r, RUN_STATE_CREATED, 0, r->at_start);
	if (k < 0)
		return k;
	r->identity = *identity;
	*identity = (RunIdentity) {};
	*ret = TAKE_PTR(r);
	return 0;
}

int run_recorder_new(pid_t pid, RunIdentity *identity, RunRecorder **ret)
{
	return recorder_new(pid, -1, false, identity, ret);
}

int run_recorder_new_cgroup(int cgroup_fd, RunIdentity *identity, RunRecorder **ret)
{
	return recorder_new(0, cgroup_fd, true, identity, ret);
}

RunIdentity *run_recorder_identity(RunRecorder *r)
{
	return &r->identity;
}

uint64_t run_recorder_started_ns(const RunRecorder *r)
{
	return r->started_ns;
}

size_t run_recorder_transitions(const RunRecorder *r, const StateTransition **ret)
{
	*ret = r->transitions;
	return r->n;
}

int run_recorder_transition(RunRecorder *r, RunState state)
{
	uint64_t elapsed_ns;

	assert_return(r, -EINVAL);
	assert_return((unsigned)state < _RUN_STATE_MAX, -EINVAL);
	if (r->finished)
		return -ESTALE;
	elapsed_ns = clock_nanos(CLOCK_MONOTONIC) - r->started_ns;
	return record_transition(r, state, elapsed_ns, snapshot_of(r));
}

void run_recorder_set_input(RunRecorder *r, uint64_t bytes, uint64_t units)
{
	r->input_bytes = bytes;
	r->input_units = units;
}

static OptU64 max_option(OptU64 a, OptU64 b)
{
	if (a.set && b.set)
		return OPT_U64(a.value > b.value ? a.value : b.value);
	return a.set ? a : b;
}

/* One per consecutive pair of transitions: the state left, with both snapshots' differences. */
static int state_measurements(const RunRecorder *r, StateMeasurement **ret, size_t *ret_n)
{
	_cleanup_free_ StateMeasurement *states = NULL;
	size_t n = 0;

	if (r->n >= 2) {
		states = calloc(r->n - 1, sizeof(*states));
		if (!states)
			return -ENOMEM;
	}
	for (size_t i = 0; i + 1 < r->n; i++) {
		const StateTransition *t0 = &r->transitions[i], *t1 = &r->transitions[i + 1];
		const ResourceSnapshot *start = &r->samples[i].snapshot;
		const ResourceSnapshot *finish = &r->samples[i + 1].snapshot;
		uint64_t elapsed_ns;
		OptU64 cpu = {};

		if (t1->elapsed_ns < t0->elapsed_ns)
			continue;
		elapsed_ns = t1->elapsed_ns - t0->elapsed_ns;
		if (start->cpu_time_ms.set && finish->cpu_time_ms.set &&
		    finish->cpu_time_ms.value >= start->cpu_time_ms.value)
			cpu = OPT_U64(finish->cpu_time_ms.value - start->cpu_time_ms.value);
		states[n++] = (StateMeasurement) {
			.state = t0->state,
			.elapsed_ns = elapsed_ns,
			.cpu_time_ms = cpu,
			.aggregate_cpu_milli_percent = resource_cpu_milli_percent(
				start->cpu_time_ms, finish->cpu_time_ms, elapsed_ns),
			.resident_start_bytes = start->resident_bytes,
			.resident_end_bytes = finish->resident_bytes,
			.threads_start = start->thread_count,
			.threads_end = finish->thread_count,
		};
	}
	*ret = n > 0 ? TAKE_PTR(states) : NULL;
	*ret_n = n;
	return 0;
}

/* start and finish snapshots, the largest of every snapshot, CPU over wall time. */
static ResourceUsage resource_usage(const RunRecorder *r, ResourceSnapshot finish, uint64_t wall_ns)
{
	ResourceUsage u = {
		.start = r->at_start,
		.finish = finish,
		.max_observed_resident_bytes = max_option(r->at_start.resident_bytes,
							  finish.resident_bytes),
		.max_observed_threads = max_option(r->at_start.thread_count, finish.thread_count),
		.aggregate_cpu_percent = resource_cpu_percent(r->at_start.cpu_time_ms,
							      finish.cpu_time_ms, wall_ns),
	};

	for (size_t i = 0; i < r->n; i++) {
		u.max_observed_resident_bytes = max_option(u.max_observed_resident_bytes,
							   r->samples[i].snapshot.resident_bytes);
		u.max_observed_threads = max_option(u.max_observed_threads,
						    r->samples[i].snapshot.thread_count);
	}
	return u;
}

int run_recorder_finish(RunRecorder *r, RunState status, RunProfile **ret)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	uint64_t wall_ns;
	int k;

	assert_return(ret, -EINVAL);
	k = run_recorder_transition(r, status);
	if (k < 0)
		return k;
	wall_ns = clock_nanos(CLOCK_MONOTONIC) - r->started_ns;

	p = calloc(1, sizeof(*p));
	if (!p)
		goto fail;
	k = state_measurements(r, &p->states, &p->n_states);
	if (k < 0)
		goto fail;
	p->resources = resource_usage(r, r->samples[r->n - 1].snapshot, wall_ns);
	p->status = status;
	p->wall_time_ns = wall_ns;
	p->input_bytes = r->input_bytes;
	p->input_units = r->input_units;
	p->identity = r->identity;
	r->identity = (RunIdentity) {};
	p->transitions = TAKE_PTR(r->transitions);
	p->n_transitions = r->n;
	p->resource_samples = TAKE_PTR(r->samples);
	p->n_resource_samples = r->n;
	r->n = r->transitions_allocated = r->samples_allocated = 0;
	r->finished = true;
	*ret = TAKE_PTR(p);
	return 0;
fail:
	/* undo the final transition so the recorder can be finished again */
	r->n--;
	return -ENOMEM;
}

RunRecorder *run_recorder_free(RunRecorder *r)
{
	if (!r)
		return NULL;
	run_identity_done(&r->identity);
	safe_close(r->cgroup_fd);
	free(r->transitions);
	free(r->samples);
	free(r);
	return NULL;
}

void run_recorder_freep(RunRecorder **r)
{
	*r = run_recorder_free(*r);
}
