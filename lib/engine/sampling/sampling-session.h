/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A sampling session: perf_event sampling of every thread of one target
 * process into mmap rings, drained as they fill; each sample is handed to a
 * resolver that interns its stack into the session's Profile (DESIGN.md §3).
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

#include "metrics.h"
#include "perf-sample.h"
#include "process-maps.h"
#include "profile.h"

#define SAMPLING_DEFAULT_HZ 99U
#define SAMPLING_HZ_CEILING 10000U
#define SAMPLING_DEFAULT_DURATION_NANOS (10ULL * 1000000000ULL)
#define SAMPLING_DEFAULT_MAX_DURATION_NANOS (60ULL * 1000000000ULL)
#define SAMPLING_DEFAULT_STACK_BYTES (16U * 1024U)
#define SAMPLING_MAX_STACK_BYTES 65528U

/* Zero-initialise, set what you need; zero/NULL fields take the defaults. */
typedef struct SamplingOptions {
	uint32_t hz;                  /* 0 = 99; clamped to [1, max_hz] */
	uint64_t duration_nanos;      /* 0 = 10 s; clamped to max_duration_nanos */
	uint64_t max_duration_nanos;  /* the operator's ceiling; 0 = 60 s */
	const char *backend;          /* NULL/"auto"/"perf-dwarf", "perf-fp"; "bpf" -> -EOPNOTSUPP */
	const char *event;            /* NULL/"cpu-clock", "task-clock", "cycles" */
	bool exclude_kernel;          /* no kernel callchain (the D-Bus `kernel` option, inverted) */
	uint32_t stack_bytes;         /* user stack copy in perf-dwarf; 0 = 16 KiB, max 65528 */
	uint64_t ring_capacity;       /* samples kept at most; 0 = hz x seconds x threads at start */
	uint64_t ring_capacity_limit; /* caller's cap on ring_capacity; 0 = none */
	/* called for every sample; NULL = built-in resolver (kernel callchain + user IP) */
	SampleResolveFn resolve;
	void *resolve_userdata;
} SamplingOptions;

typedef struct SamplingSession SamplingSession;

/* max_hz = min(10000, kernel.perf_event_max_sample_rate) */
int sampling_max_hz(uint32_t *ret);
/* Backend/event names accepted in SamplingOptions; -EINVAL for unknown, -EOPNOTSUPP for bpf. */
int sampling_backend_check(const char *backend);
int sampling_event_check(const char *event);

/* 'pid' may be any thread of the target: the session profiles its whole process. */
int sampling_session_new(pid_t pid, const SamplingOptions *options, SamplingSession **ret);
SamplingSession *sampling_session_free(SamplingSession *s);
void sampling_session_freep(SamplingSession **s);
#define _cleanup_sampling_session_ __attribute__((cleanup(sampling_session_freep)))

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

/* Live while sampling (counters so far), final once finished. */
const Profile *sampling_session_get_profile(const SamplingSession *s);
/* Hand the Profile over (only once finished); the session keeps its metrics. */
Profile *sampling_session_steal_profile(SamplingSession *s);
const ProcessMaps *sampling_session_get_maps(const SamplingSession *s);
void sampling_session_get_metrics(const SamplingSession *s, SamplingMetrics *ret);
