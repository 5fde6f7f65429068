/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A Collector: one sampling session and its stack resolver, run on threads
 * of their own, for the daemon and `profctl --local` alike (DESIGN.md §3).
 *
 * A drain thread moves the target's records from the perf rings into a
 * byte-capped backlog (backlog.h); an unwind thread resolves them into the
 * Profile. Draining never waits for unwinding, so a slow first unwind (cold
 * symbol caches) delays the result but loses nothing: only a full backlog
 * drops samples, and those are counted as such (backlog_dropped, part of
 * samples_dropped).
 *
 * Lifecycle:
 *   collector_new()    validate and clamp, open the events, start both threads
 *                      idle (errors as sampling_session_new(), and -EAGAIN
 *                      when a thread cannot start)
 *   collector_start()  enable the events: the window starts
 *   collector_stop()   end the window early; any thread, async-signal-safe,
 *                      before start() too
 *   collector_get_fd() readable once finished: profile and metrics are final
 *   collector_wait()   block until finished; the session's error or 0
 *   collector_steal_profile(), collector_free() (stops and joins what runs)
 *
 * collector_get_metrics() is a consistent snapshot at any time, from any thread.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backlog.h"
#include "metrics.h"
#include "profile.h"
#include "sampling-session.h"
#include "profile-builder.h"
#include "stack-quality.h"
#include "stack-resolver.h"
#include "target-files.h"

/*
 * Is the target still one the caller may profile? Called on the drain thread
 * before every drain (at most 250 ms apart) and once by collector_start().
 * A negative return ends the session ("credentials-changed"); only records up
 * to the moment just before the last successful call are kept.
 */
typedef int (*CollectorCheckFn)(void *userdata);

typedef struct CollectorOptions {
	/* the request; record_sink is the collector's own, 'resolve' replaces the StackResolver */
	SamplingOptions sampling;
	/* unwinding: mode and kernel follow 'sampling' (backend, exclude_kernel); cache may be shared */
	StackResolverOptions resolver;
	/* most bytes of records waiting for the unwinder; 0 = collector_default_max_backlog() */
	uint64_t max_backlog_bytes;
	/* the kernel's symbols for KALLSYMS requests (kernel-table.h; NULL: /proc/kallsyms) */
	KernelTable *kernel_table;
	/* debug files by build-id that no debug directory holds (TargetFilePolicy.fetch); NULL: none */
	const TargetFileOpener *debug_fetch;
	/* what a debug file found by build-id is handed over as (TargetFilePolicy); NULL: itself */
	const DebugFileSubstitute *debug_substitute;
	CollectorCheckFn check;
	void *check_userdata;
	/*
	 * The backlog is consumed by another process (the sandboxed unwinder): no
	 * resolver and no unwind thread here; the caller hands the backlog over
	 * (collector_get_backlog()), serves its file requests
	 * (collector_open_target_file()) and reports its end (collector_consumer_done()).
	 */
	bool unwind_elsewhere;
	/*
	 * ... then the processes whose mapping records are kept for when they are
	 * gone (0: COLLECTOR_RECORDED_PROCESSES_MAX); later ones are counted
	 * (metrics.processes_unrecorded, samples_unrecorded), and once gone get
	 * only the files a recorded process mapped too, and root's debug files.
	 */
	uint32_t max_recorded_processes;
	/*
	 * A backlog an earlier collector of the same consumer gave back
	 * (collector_take_backlog()), used again if it is the size this session
	 * wants: taken then (*reuse_backlog set to NULL), else left to the caller.
	 */
	Backlog **reuse_backlog;
} CollectorOptions;

/* A few KiB each: a cgroup that forks without end cannot grow profd's memory without end. */
#define COLLECTOR_RECORDED_PROCESSES_MAX 4096U

typedef struct Collector Collector;

/* One second of the default request (999 Hz ceiling of the DESIGN's tests, 16 KiB stacks) on every CPU. */
int collector_default_max_backlog(uint64_t *ret);

int collector_new(pid_t pid, const CollectorOptions *options, Collector **ret);
Collector *collector_free(Collector *c);
void collector_freep(Collector **c);
#define _cleanup_collector_ __attribute__((cleanup(collector_freep)))

/* -EPERM when the check refuses the target already. */
int collector_start(Collector *c);
void collector_stop(Collector *c);
int collector_get_fd(const Collector *c);
int collector_wait(Collector *c);
bool collector_is_finished(Collector *c);

void collector_get_metrics(Collector *c, SamplingMetrics *ret);
/* Once finished: the Profile, handed over (NULL before, or when taken already). */
Profile *collector_steal_profile(Collector *c);
/*
 * Once finished, after the metrics were taken: the backlog, handed over for the
 * next session of the same consumer (CollectorOptions.reuse_backlog), if the one
 * consumer elsewhere took it to the end (none died on it, none failed); else NULL.
 */
Backlog *collector_take_backlog(Collector *c);
/* Once finished: the StackResolver's "cold"/"warm" (NULL with a caller's resolve function). */
const char *collector_cache_state(Collector *c);
/*
 * Once finished: the stack-quality report (stack-quality.h) of the session,
 * of all its processes, worded here ('fetch': the state of debuginfod
 * fetches, NULL: none in this process); -ENODATA when there is none (bpf, a
 * consumer elsewhere that sent none).
 */
int collector_get_stack_quality(Collector *c, StackQualityFetchFn fetch, void *userdata,
				json_t **ret);
/* A process of the target exec'd during the window (its program is another one since). */
bool collector_target_execed(Collector *c);

/* ---- with unwind_elsewhere ---- */

/* The backlog's memfd and eventfd (still the collector's) to hand to the consumer. */
int collector_get_backlog(Collector *c, int *ret_memfd, int *ret_eventfd);
/* The format of the records in it. */
const PerfRecordFormat *collector_get_format(const Collector *c);
/*
 * Open a file of the target for the consumer, with the rules of
 * target-files.h and the files opened while the target mapped them; a request
 * about any other process is -EPERM, kernel files only with kernel frames.
 */
int collector_open_target_file(Collector *c, const TargetFileRequest *request);
/*
 * A process of a multi-process target (which the consumer names by the pid
 * of its records): the pid it knows itself by in its own namespace, only
 * while it is in the target and passes the admit rule (else -EPERM).
 */
int collector_namespace_pid(Collector *c, uint32_t pid, uint32_t *ret);
/*
 * The consumer's requests were not read for 'nanos': it asked for more than
 * its share of the server's time (metrics.consumer_throttled_nanos).
 */
void collector_consumer_throttled(Collector *c, uint64_t nanos);
/* Live counters of the consumer (ignored when they cannot be true). */
void collector_consumer_progress(Collector *c, const ProfileBuilderStats *stats, uint64_t cpu_nanos);
/*
 * Before collector_consumer_done(): the consumer's stack-quality counts
 * (stack_quality_to_wire()), hostile input: -EBADMSG when they are malformed
 * or claim more samples than the consumer was given.
 */
int collector_consumer_quality(Collector *c, const char *wire, size_t size);
/*
 * The consumer died (its process crashed or was killed): another one takes
 * over the backlog where it stands. Returns a sealed memfd of the records
 * that tell the new one what came before (the target's processes, their code
 * mappings and names, as the records said); what the dead one had taken is
 * lost (metrics.samples_lost_unwinder, once done; unwinder_restarts counts
 * these calls). -EALREADY once the consumer is done.
 */
int collector_consumer_restart(Collector *c);
/*
 * The consumer ended: its final counters, whether its resolver knew the
 * executable already (collector_cache_state()) and the stack copy its walks
 * needed (stack_resolver_stack_bytes_needed(), 0: unknown; clamped to what
 * could be true, then metrics.stack_bytes_needed), or an error (it crashed,
 * hung, or told nonsense; the window ends then). -EBADMSG when the counters
 * cannot be true (more samples than it was given), which fails the session.
 */
int collector_consumer_done(Collector *c, const ProfileBuilderStats *stats, uint64_t cpu_nanos,
			    bool warm, uint32_t stack_bytes_needed, int error);
