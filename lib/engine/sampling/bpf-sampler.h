/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The `bpf` backend (DESIGN.md §3): bpf/profile.bpf.c, attached to one
 * cpu-clock event per CPU, counts samples per (process, thread, address
 * space, user stack, kernel stack) in kernel maps; user space does nothing per
 * sample. Live counters are read from the program's memory, the buckets once
 * at the end. Naming is not done here: the sampler writes records, as a perf
 * session does, for whoever names them — its side band of
 * MMAP2/COMM/FORK/EXIT records (side-band.h) as they come, the state of the
 * processes it joins from /proc as MMAP2 and COMM records (target-snapshot.h),
 * and at the end each bucket as one SAMPLE record weighing its count
 * (bpf-buckets.h): a callchain the kernel walked by frame pointer, named as
 * perf-fp's are. The records go to SamplingOptions.record_sink (a Collector's
 * backlog, consumed by the sandboxed unwinder in profd), or without one to a
 * ProfileBuilder here (profctl --local, tests).
 *
 * What it cannot do: timestamps (the Profile's samples all have time 0 and
 * profile->untimed is set), DWARF unwinding (code without frame pointers
 * gives truncated stacks, counted in truncated_stacks), live runs.
 *
 * The lifecycle is a SamplingSession's (sampling-session.h): new, start, then
 * run() or process() on the fd until it returns 0; stop() from anywhere.
 * The target must outlive the sampler.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cleanup.h"
#include "metrics.h"
#include "process-table.h"
#include "profile.h"
#include "sampling-session.h"
#include "sampling-target.h"
#include "stack-resolver.h"

typedef struct BpfSampler BpfSampler;

/* Can this machine and process run the bpf backend? 0, or a negative errno: why not. */
int bpf_sampler_probe(void);

/*
 * options->record_sink set: the records go there (in record_format order, from
 * the thread that calls new() and then the one that runs the sampler), and no
 * profile is made here. Else stacks are named here with options->resolve when
 * set, else by a StackResolver per process (frame-pointer mode) made from
 * 'resolver' (NULL: defaults), whose mapped files are opened as the records
 * say, so processes that exited or exec'ed before the end are named too
 * (recorded-files.h).
 *
 * Errors: -ESRCH no such process, -EOPNOTSUPP no bpf here (bpf_sampler_probe()),
 * -EINVAL bad option, -EPERM/-EACCES not privileged enough.
 */
int bpf_sampler_new(const SamplingTarget *target, const SamplingOptions *options,
		    const StackResolverOptions *resolver, BpfSampler **ret);
BpfSampler *bpf_sampler_free(BpfSampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(BpfSampler *, bpf_sampler_free);

int bpf_sampler_start(BpfSampler *s);
int bpf_sampler_run(BpfSampler *s);
/* Thread- and async-signal-safe. */
void bpf_sampler_stop(BpfSampler *s);

int bpf_sampler_get_fd(const BpfSampler *s);
uint64_t bpf_sampler_get_deadline(const BpfSampler *s);
/* 1 while sampling, 0 once finished (the profile is complete), or a negative errno. */
int bpf_sampler_process(BpfSampler *s);
bool bpf_sampler_is_finished(const BpfSampler *s);

/* The format of the records it writes (side band and samples). */
const PerfRecordFormat *bpf_sampler_get_format(void);
/* CLOCK_MONOTONIC of the window's start, once started. */
uint64_t bpf_sampler_get_start(const BpfSampler *s);

/* Without a sink, NULL until finished: the buckets are read at the end. */
const Profile *bpf_sampler_get_profile(const BpfSampler *s);
Profile *bpf_sampler_steal_profile(BpfSampler *s);
const ProcessTable *bpf_sampler_get_processes(const BpfSampler *s);
/* Live while sampling (from the program's counters), final once finished. */
void bpf_sampler_get_metrics(const BpfSampler *s, SamplingMetrics *ret);
