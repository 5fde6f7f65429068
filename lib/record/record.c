/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The record model: identities, freeing and equality. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "record.h"

static atomic_uint_fast64_t run_sequence;

/* Decimal digits of a u128 into buf (at least 40 bytes). */
static void format_u128(unsigned __int128 v, char *buf)
{
	char tmp[40];
	size_t n = 0;

	do {
		tmp[n++] = (char) ('0' + (int) (v % 10));
		v /= 10;
	} while (v > 0);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
}

/* The CPUs this process may run on, as Rust's available_parallelism(). */
static uint64_t logical_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (uint64_t) CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint64_t) n : 1;
}

int run_identity_set_string(char **field, const char *value)
{
	char *copy = NULL;

	if (value) {
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
	}
	free(*field);
	*field = copy;
	return 0;
}

int run_identity_new(const char *binary_version,
		     const char *detector_digest,
		     const char *config_digest,
		     const char *source_kind,
		     const char *workload_class,
		     const char *backend_requested,
		     RunIdentity *ret)
{
	RunIdentity id = {
		.cache_state = CACHE_STATE_UNKNOWN,
		.daemon_state = DAEMON_STATE_OFF,
		.logical_cpus = logical_cpus(),
	};
	const char *values[] = { binary_version, detector_digest, config_digest,
				 source_kind,    workload_class,  backend_requested };
	char **fields[] = { &id.binary_version, &id.detector_digest, &id.config_digest,
			    &id.source_kind,    &id.workload_class,  &id.backend_requested };
	char unix_ns[40];
	struct timespec ts;
	uint64_t sequence;

	for (size_t i = 0; i < ELEMENTSOF(values); i++)
		if (!values[i])
			return -EINVAL;

	sequence = atomic_fetch_add_explicit(&run_sequence, 1, memory_order_relaxed);
	clock_gettime(CLOCK_REALTIME, &ts);
	format_u128((unsigned __int128) (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec,
		    unix_ns);
	if (asprintf(&id.run_id, "%d-%s-%" PRIu64, (int) getpid(), unix_ns, sequence) < 0) {
		id.run_id = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < ELEMENTSOF(values); i++)
		if (run_identity_set_string(fields[i], values[i]) < 0) {
			run_identity_done(&id);
			return -ENOMEM;
		}
	*ret = id;
	return 0;
}

void run_identity_done(RunIdentity *id)
{
	free(id->run_id);
	free(id->binary_version);
	free(id->detector_digest);
	free(id->config_digest);
	free(id->source_kind);
	free(id->workload_class);
	free(id->backend_requested);
	free(id->backend_selected);
	json_decref(id->extra);
	*id = (RunIdentity) {};
}

RunProfile *run_profile_free(RunProfile *p)
{
	if (!p)
		return NULL;
	run_identity_done(&p->identity);
	for (size_t i = 0; i < p->n_stages; i++)
		json_decref(p->stages[i].extra);
	free(p->stages);
	for (size_t i = 0; i < p->n_transitions; i++)
		json_decref(p->transitions[i].extra);
	free(p->transitions);
	for (size_t i = 0; i < p->n_states; i++)
		json_decref(p->states[i].extra);
	free(p->states);
	for (size_t i = 0; i < p->n_resource_samples; i++) {
		json_decref(p->resource_samples[i].snapshot.extra);
		json_decref(p->resource_samples[i].extra);
	}
	free(p->resource_samples);
	json_decref(p->resources.start.extra);
	json_decref(p->resources.finish.extra);
	json_decref(p->resources.extra);
	json_decref(p->extra);
	free(p);
	return NULL;
}

void run_profile_freep(RunProfile **p)
{
	*p = run_profile_free(*p);
}

/* ---- equality ---- */

static bool extra_equal(const json_t *a, const json_t *b)
{
	if (!a || !b)
		return !a && !b;
	return json_equal(a, b);
}

static bool str_equal(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	return strcmp(a, b) == 0;
}

static bool opt_u64_equal(OptU64 a, OptU64 b)
{
	return a.set == b.set && (!a.set || a.value == b.value);
}

static bool opt_f64_equal(OptF64 a, OptF64 b)
{
	return a.set == b.set && (!a.set || a.value == b.value);
}

static bool identity_equal(const RunIdentity *a, const RunIdentity *b)
{
	return str_equal(a->run_id, b->run_id) && str_equal(a->binary_version, b->binary_version) &&
	       str_equal(a->detector_digest, b->detector_digest) &&
	       str_equal(a->config_digest, b->config_digest) &&
	       str_equal(a->source_kind, b->source_kind) &&
	       str_equal(a->workload_class, b->workload_class) &&
	       str_equal(a->backend_requested, b->backend_requested) &&
	       str_equal(a->backend_selected, b->backend_selected) &&
	       a->cache_state == b->cache_state && a->daemon_state == b->daemon_state &&
	       a->scanner_threads == b->scanner_threads &&
	       opt_u64_equal(a->reader_threads, b->reader_threads) &&
	       a->logical_cpus == b->logical_cpus && extra_equal(a->extra, b->extra);
}

static bool stage_equal(const StageMeasurement *a, const StageMeasurement *b)
{
	return a->stage == b->stage && a->elapsed_ns == b->elapsed_ns && a->calls == b->calls &&
	       a->attributed_ns == b->attributed_ns && extra_equal(a->extra, b->extra);
}

static bool transition_equal(const StateTransition *a, const StateTransition *b)
{
	return a->state == b->state && a->elapsed_ns == b->elapsed_ns &&
	       extra_equal(a->extra, b->extra);
}

static bool state_equal(const StateMeasurement *a, const StateMeasurement *b)
{
	return a->state == b->state && a->elapsed_ns == b->elapsed_ns &&
	       opt_u64_equal(a->cpu_time_ms, b->cpu_time_ms) &&
	       opt_u64_equal(a->aggregate_cpu_milli_percent, b->aggregate_cpu_milli_percent) &&
	       opt_u64_equal(a->resident_start_bytes, b->resident_start_bytes) &&
	       opt_u64_equal(a->resident_end_bytes, b->resident_end_bytes) &&
	       opt_u64_equal(a->threads_start, b->threads_start) &&
	       opt_u64_equal(a->threads_end, b->threads_end) && extra_equal(a->extra, b->extra);
}

static bool snapshot_equal(const ResourceSnapshot *a, const ResourceSnapshot *b)
{
	return opt_u64_equal(a->cpu_time_ms, b->cpu_time_ms) &&
	       opt_u64_equal(a->resident_bytes, b->resident_bytes) &&
	       opt_u64_equal(a->virtual_bytes, b->virtual_bytes) &&
	       opt_u64_equal(a->thread_count, b->thread_count) && extra_equal(a->extra, b->extra);
}

static bool sample_equal(const ResourceSample *a, const ResourceSample *b)
{
	return a->state == b->state && a->elapsed_ns == b->elapsed_ns &&
	       snapshot_equal(&a->snapshot, &b->snapshot) && extra_equal(a->extra, b->extra);
}

static bool usage_equal(const ResourceUsage *a, const ResourceUsage *b)
{
	return snapshot_equal(&a->start, &b->start) && snapshot_equal(&a->finish, &b->finish) &&
	       opt_u64_equal(a->max_observed_resident_bytes, b->max_observed_resident_bytes) &&
	       opt_u64_equal(a->max_observed_threads, b->max_observed_threads) &&
	       opt_f64_equal(a->aggregate_cpu_percent, b->aggregate_cpu_percent) &&
	       extra_equal(a->extra, b->extra);
}

#define ARRAY_EQUAL(a, b, n, field, eq)                                  \
	({                                                               \
		bool _eq_ = (a)->n == (b)->n;                            \
		for (size_t _i_ = 0; _eq_ && _i_ < (a)->n; _i_++)        \
			_eq_ = eq(&(a)->field[_i_], &(b)->field[_i_]);   \
		_eq_;                                                    \
	})

bool run_profile_equal(const RunProfile *a, const RunProfile *b)
{
	if (!a || !b)
		return !a && !b;
	return identity_equal(&a->identity, &b->identity) && a->status == b->status &&
	       a->wall_time_ns == b->wall_time_ns && a->input_bytes == b->input_bytes &&
	       a->input_units == b->input_units &&
	       ARRAY_EQUAL(a, b, n_stages, stages, stage_equal) &&
	       ARRAY_EQUAL(a, b, n_transitions, transitions, transition_equal) &&
	       ARRAY_EQUAL(a, b, n_states, states, state_equal) &&
	       ARRAY_EQUAL(a, b, n_resource_samples, resource_samples, sample_equal) &&
	       usage_equal(&a->resources, &b->resources) && extra_equal(a->extra, b->extra);
}
