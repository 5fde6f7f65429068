/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A sampling session: perf_event sampling of every thread of one target
 * process into mmap rings, drained as they fill (DESIGN.md §3). The target's
 * records (its samples, mappings and thread names, beginning with the ones the
 * session synthesizes from /proc at start) go in order either to a record sink
 * (a Collector's backlog) or, without one, to the session's own
 * ProfileBuilder, which resolves each sample into the session's Profile.
 *
 * Lifecycle:
 *   sampling_session_new()   validate and clamp the request, open one event
 *                            per thread (errors: -ESRCH no such process,
 *                            -EOPNOTSUPP event/backend unsupported here,
 *                            -EINVAL bad option, -EPERM/-EACCES)
 *   sampling_session_start() enable the events; the window starts here
 *   then either sampling_session_run() (blocks until done), or integrate
 *   sampling_session_get_fd() into an event loop and call
 *   sampling_session_process() whenever it is readable (or at the deadline)
 *   until it returns 0; then take the fd out of the loop (the session's
 *   fds are quiet once finished, but a late stop() still makes it readable).
 *   sampling_session_stop() ends the window early from any thread (and is
 *   async-signal-safe: it only write()s an eventfd).
 *
 * The Profile and the metrics stay readable after the session finished, until
 * sampling_session_free().
 *
 * A session holds one perf event per thread and online CPU (inherited events
 * can only be mapped per CPU): a target with T threads on C CPUs costs T x C
 * file descriptors, so callers profiling big programs should raise
 * RLIMIT_NOFILE's soft limit (-EMFILE otherwise).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cleanup.h"
#include "metrics.h"
#include "perf-record.h"
#include "perf-sample.h"
#include "process-maps.h"
#include "process-table.h"
#include "profile.h"
#include "sampling-target.h"

#define SAMPLING_DEFAULT_HZ 99U
#define SAMPLING_HZ_CEILING 10000U
#define SAMPLING_DEFAULT_DURATION_NANOS (10ULL * 1000000000ULL)
#define SAMPLING_DEFAULT_MAX_DURATION_NANOS (60ULL * 1000000000ULL)
#define SAMPLING_DEFAULT_STACK_BYTES (16U * 1024U)
#define SAMPLING_MAX_STACK_BYTES 65528U

/*
 * Takes one record of the target: a SAMPLE within the budget, a MMAP2 or a
 * COMM (real or synthesized). 'raw' is its bytes (valid during the call only),
 * 'rec' their parse. Return 0, -ENOBUFS when there was no room for it (a
 * sample is then counted as dropped, see backlog_dropped), or another negative
 * errno to fail the session.
 */
typedef int (*SamplingRecordFn)(void *userdata, const struct perf_event_header *raw,
				const PerfRecord *rec);

/* Zero-initialise, set what you need; zero/NULL fields take the defaults. */
typedef struct SamplingOptions {
	uint32_t hz;                  /* 0 = 99; clamped to [1, max_hz] */
	uint64_t duration_nanos;      /* 0 = 10 s; clamped to max_duration_nanos */
	uint64_t max_duration_nanos;  /* the operator's ceiling; 0 = 60 s */
	const char *backend;          /* NULL/"auto"/"perf-dwarf", "perf-fp" ("bpf": see bpf-sampler.h) */
	const char *event;            /* NULL/"cpu-clock", "task-clock", "cycles" */
	bool exclude_kernel;          /* no kernel callchain (the D-Bus `kernel` option, inverted) */
	uint32_t stack_bytes;         /* user stack copy in perf-dwarf; 0 = 16 KiB, max 65528 */
	uint32_t stack_bytes_copy;    /* what to copy when less will do (learned from earlier
					 sessions: adaptive stack copy); 0 or above stack_bytes:
					 stack_bytes. Rounded up to whole u64 words */
	uint64_t sample_budget;       /* samples kept at most; 0 = what the event can produce, see
					 session_update_capacity() */
	uint64_t sample_budget_limit; /* caller's cap on sample_budget; 0 = none */
	uint32_t max_events;          /* perf fds the session may open (-EMFILE beyond); 0 = no cap */
	/* called for every sample; NULL = built-in resolver (kernel callchain + user IP) */
	SampleResolveFn resolve;
	void *resolve_userdata;
	/* set: the target's records go here instead (and 'resolve' is unused) */
	SamplingRecordFn record_sink;
	void *record_sink_userdata;
	/*
	 * A cgroup or the whole machine instead of the pid given to new() (borrowed,
	 * outlives the session; NULL or a PID target: one process). Events are per
	 * CPU; processes join and leave as they start, move and exit; 'admit' (NULL:
	 * all) decides which may be sampled, asked once per process and again after
	 * each exec: the others are counted (processes_excluded, samples_excluded).
	 */
	const SamplingTarget *target;
	ProcessAdmitFn admit;
	void *admit_userdata;
} SamplingOptions;

typedef struct SamplingSession SamplingSession;

/*
 * The default sample budget of a window: what the event can produce, one sample
 * per period for each running thread and at most one thread per CPU at a time:
 * min(threads, cpus) x (ceil(hz x seconds) + 1), saturating.
 */
uint64_t sampling_default_budget(uint32_t hz, uint64_t duration_nanos, uint64_t threads,
				 uint64_t cpus);

/* max_hz = min(10000, kernel.perf_event_max_sample_rate) */
int sampling_max_hz(uint32_t *ret);
/* Backend/event names a session may ask for; -EINVAL for unknown, -EOPNOTSUPP for bpf where
 * this machine or build cannot run it. */
int sampling_backend_check(const char *backend);
int sampling_event_check(const char *event);

/*
 * 'pid' may be any thread of the target: the session profiles its whole
 * process. With options->target a cgroup or the system, 'pid' is ignored.
 */
int sampling_session_new(pid_t pid, const SamplingOptions *options, SamplingSession **ret);
SamplingSession *sampling_session_free(SamplingSession *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(SamplingSession *, sampling_session_free);
#define _cleanup_sampling_session_ __attribute__((cleanup(sampling_session_freep)))

/* Hand the synthesized records to the sink, then enable the events: the window starts here. */
int sampling_session_start(SamplingSession *s);
/* Start if needed, then process until done. Returns 0 or a negative errno. */
int sampling_session_run(SamplingSession *s);
/* Thread- and async-signal-safe. */
void sampling_session_stop(SamplingSession *s);

/* An epoll fd: readable when process() has work (ring data, stop, deadline, target exit). */
int sampling_session_get_fd(const SamplingSession *s);
/* CLOCK_MONOTONIC nanoseconds when the window ends (UINT64_MAX before start). */
uint64_t sampling_session_get_deadline(const SamplingSession *s);
/*
 * Drain rings, handle events. Returns 1 while sampling, 0 once finished, a
 * negative errno on failure (the session is then finished, its partial profile kept).
 */
int sampling_session_process(SamplingSession *s);
bool sampling_session_is_finished(const SamplingSession *s);

/* Live while sampling (counters so far), final once finished; NULL with a record sink. */
const Profile *sampling_session_get_profile(const SamplingSession *s);
/* Hand the Profile over (only once finished); the session keeps its metrics. */
Profile *sampling_session_steal_profile(SamplingSession *s);
const ProcessMaps *sampling_session_get_maps(const SamplingSession *s);
void sampling_session_get_metrics(const SamplingSession *s, SamplingMetrics *ret);
/* The target's process id (a thread id given to new() stands for its process); 0 for many. */
pid_t sampling_session_get_pid(const SamplingSession *s);
/* CLOCK_MONOTONIC nanoseconds when the window started (0 before start). */
uint64_t sampling_session_get_start(const SamplingSession *s);
/* The format its records are in (for a sink that parses them again later). */
const PerfRecordFormat *sampling_session_get_format(const SamplingSession *s);
/* Bytes of records one second of sampling can produce at most: hz x CPUs x largest sample. */
uint64_t sampling_session_max_bytes_per_second(const SamplingSession *s);
