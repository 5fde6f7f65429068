/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bpf-sampler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf-buckets.h"
#include "cleanup.h"
#include "pause-estimate.h"
#include "perf-event.h"
#include "profile-bpf.h"
#include "process-resolvers.h"
#include "profile-builder.h"
#include "profile.skel.h"
#include "recorded-files.h"
#include "sampling-request.h"
#include "session-loop.h"
#include "side-band.h"
#include "target-snapshot.h"
#include "task-list.h"
#include "time-util.h"

/* Side band ring per CPU: the whole machine maps and forks more than one process. */
#define SIDE_BAND_BYTES_SYSTEM (512U * 1024U)
#define SIDE_BAND_BYTES (128U * 1024U)
/* Map sizes follow the samples a session can take, within these bounds. */
#define MIN_MAP_ENTRIES 1024U
#define MAX_STACK_ENTRIES 32768U
#define MAX_COUNT_ENTRIES 65536U

#define SOURCE_SIDE_BAND SESSION_SOURCE_BACKEND

/* The side band's records, and the aggregated samples of the buckets (bpf-buckets.h). */
static const PerfRecordFormat record_format = {
	.sample_type = SIDE_BAND_SAMPLE_TYPE | PERF_SAMPLE_IP | PERF_SAMPLE_ADDR |
		       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_WEIGHT,
	.sample_id_all = true,
};

/* The program's counters, as copied at the end. */
typedef struct BpfCounters {
	uint64_t samples, dropped, lost_stacks, exec_errors, budget_end_ns;
} BpfCounters;

struct BpfSampler {
	const SamplingTarget *target;
	SamplingRequest request;
	const char *event, *end_reason;
	bool kernel;
	uint64_t sample_budget, explicit_sample_budget, sample_budget_limit;
	struct perf_event_attr attr;
	char *target_name;

	struct profile_bpf *skel;
	int *event_fds; /* one per online CPU until attached; then the links own them */
	struct bpf_link **links;
	size_t n_cpus, n_links;
	SideBand *side_band;
	ProcessTable *processes;
	uint64_t threads_at_start;

	/* the records go to the caller's sink, or are named here by a builder */
	SamplingRecordFn sink;
	void *sink_userdata;
	ProfileBuilder *builder;
	ProcessResolvers *resolvers; /* the builder's, when the caller gave no resolve function */
	RecordedFiles files;
	TargetFileOpener opener;     /* files, for the resolvers */
	Profile *profile;            /* once finished, named here */
	RecordBuffer snapshot;       /* scratch: a process's state as records */

	SessionLoop loop;
	uint64_t end_mono;

	/* final figures */
	BpfCounters counters;
	BpfBucketStats stats;
	uint64_t program_runs, program_nanos, side_band_lost, side_band_bytes;
	uint64_t setup_cpu_nanos, naming_cpu_nanos;
	uint64_t sink_dropped; /* samples the sink had no room for */
};

int bpf_sampler_probe(void)
{
	int r;

	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		return -EOPNOTSUPP; /* CO-RE needs the kernel's BTF */
	r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL);
	if (r == 0)
		return -EOPNOTSUPP;
	return r < 0 ? r : 0;
}

static void close_events(BpfSampler *s)
{
	for (size_t i = 0; i < s->n_links; i++)
		bpf_link__destroy(s->links[i]);
	s->n_links = 0;
	for (size_t i = 0; s->event_fds && i < s->n_cpus; i++)
		s->event_fds[i] = safe_close(s->event_fds[i]);
}

BpfSampler *bpf_sampler_free(BpfSampler *s)
{
	if (!s)
		return NULL;
	close_events(s);
	free(s->links);
	free(s->event_fds);
	profile_bpf__destroy(s->skel);
	side_band_free(s->side_band);
	/* the resolvers' file opener reads the builder's process table: they go first */
	process_resolvers_free(s->resolvers);
	profile_builder_free(s->builder);
	process_table_free(s->processes);
	profile_free(s->profile);
	record_buffer_clear(&s->snapshot);
	session_loop_close(&s->loop);
	bpf_bucket_stats_clear(&s->stats);
	free(s->target_name);
	free(s);
	return NULL;
}

/* The sampling event of every CPU: cpu-clock (or the named event) at hz, for one cgroup or all. */
static int open_events(BpfSampler *s)
{
	_cleanup_free_ int *cpus = NULL;
	int cgroup_fd = s->target->kind == SAMPLING_TARGET_CGROUP ? s->target->cgroup_fd : -1;
	size_t n;
	int r;

	r = perf_online_cpus(&cpus, &n);
	if (r < 0)
		return r;
	s->event_fds = malloc(n * sizeof(int));
	s->links = calloc(n, sizeof(struct bpf_link *));
	if (!s->event_fds || !s->links)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s->event_fds[i] = -1;
	s->n_cpus = n;
	for (size_t i = 0; i < n; i++) {
		r = perf_event_open_cpu(&s->attr, cgroup_fd, cpus[i], &s->event_fds[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A power of two from MIN_MAP_ENTRIES up to 'max' that holds 'want'. */
static uint32_t map_entries(uint64_t want, uint32_t max)
{
	uint32_t n = MIN_MAP_ENTRIES;

	while (n < want && n < max)
		n *= 2;
	return n;
}

static int tgids_add(BpfSampler *s, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;

	return bpf_map__update_elem(s->skel->maps.tgids, &key, sizeof(key), &one, sizeof(one),
				    BPF_ANY);
}

/* Open, size, load and configure the program; attach the exec/exit tracepoints. */
static int load_program(BpfSampler *s)
{
	uint64_t expected = (uint64_t)s->request.hz * (s->request.duration / NSEC_PER_SEC + 1) *
			    s->n_cpus;
	uint32_t zero = 0;
	struct stat ns;
	int r;

	s->skel = profile_bpf__open();
	if (!s->skel)
		return negative_errno();
	switch (s->target->kind) {
	case SAMPLING_TARGET_PID:
		s->skel->rodata->filter = PROFILE_BPF_FILTER_TGIDS;
		break;
	case SAMPLING_TARGET_CGROUP:
		s->skel->rodata->filter = PROFILE_BPF_FILTER_CGROUP;
		break;
	default:
		s->skel->rodata->filter = PROFILE_BPF_FILTER_ALL;
		break;
	}
	s->skel->rodata->kernel_stacks = s->kernel;
	/* pids as our /proc shows them, also in a container (a pid namespace of its own) */
	if (stat("/proc/self/ns/pid", &ns) < 0)
		return negative_errno();
	s->skel->rodata->pidns_ino = (uint32_t)ns.st_ino;
	/* code without frame pointers makes nearly every sample a new (garbage) stack */
	r = bpf_map__set_max_entries(s->skel->maps.stacks, map_entries(expected, MAX_STACK_ENTRIES));
	if (r >= 0)
		r = bpf_map__set_max_entries(s->skel->maps.counts,
					     map_entries(expected, MAX_COUNT_ENTRIES));
	if (r >= 0)
		r = profile_bpf__load(s->skel);
	if (r < 0)
		return r;

	switch (s->target->kind) {
	case SAMPLING_TARGET_PID:
		r = tgids_add(s, s->target->pid);
		break;
	case SAMPLING_TARGET_CGROUP:
		r = bpf_map__update_elem(s->skel->maps.cgroups, &zero, sizeof(zero),
					 &s->target->cgroup_fd, sizeof(int), BPF_ANY);
		break;
	default:
		r = tgids_add(s, getpid());
		for (size_t i = 0; r >= 0 && i < s->target->n_excluded; i++)
			r = tgids_add(s, s->target->excluded[i]);
		break;
	}
	if (r < 0)
		return r;
	/* exec numbering must run before any record or sample we rely on */
	return profile_bpf__attach(s->skel);
}

/* Is a record about a process of the target? (The kernel filters cgroups already.) */
static bool record_is_target(const BpfSampler *s, uint32_t pid)
{
	if (pid == 0)
		return false;
	switch (s->target->kind) {
	case SAMPLING_TARGET_PID:
		return pid == (uint32_t)s->target->pid;
	case SAMPLING_TARGET_SYSTEM:
		return !sampling_target_excludes(s->target, (pid_t)pid);
	default:
		return true;
	}
}

static uint32_t record_pid(const PerfRecord *rec)
{
	switch (rec->type) {
	case PERF_RECORD_MMAP2:
		return rec->mmap2.pid;
	case PERF_RECORD_COMM:
		return rec->comm.pid;
	default:
		return rec->task.pid;
	}
}

/* A record for whoever names: the caller's sink, or our builder. */
static int emit(void *userdata, const struct perf_event_header *raw)
{
	BpfSampler *s = userdata;
	PerfRecord rec;
	int r;

	r = perf_record_parse(&record_format, raw, raw->size, &rec);
	if (r < 0)
		return r;
	if (!s->sink)
		return profile_builder_add(s->builder, &rec);
	r = s->sink(s->sink_userdata, raw, &rec);
	if (r == -ENOBUFS && rec.type == PERF_RECORD_SAMPLE) {
		s->sink_dropped += rec.sample.weight;
		return 0;
	}
	return r;
}

/*
 * A process our table joined from /proc: what it read (code mappings, thread
 * names) as records, since the consumer may have no /proc of its own.
 */
static int emit_process_at(BpfSampler *s, const TargetProcess *p, uint64_t time)
{
	int r;

	if (p->excluded)
		return 0; /* never named: nothing of it leaves */
	s->snapshot.size = 0;
	r = target_snapshot_known_process(p->pid, p->spaces[p->n_spaces - 1], &record_format, time,
					  &s->snapshot);
	for (size_t at = 0; r >= 0 && at < s->snapshot.size;) {
		const struct perf_event_header *h = (const void *)(s->snapshot.data + at);

		r = emit(s, h);
		at += h->size;
	}
	return r;
}

static int emit_process(void *userdata, const TargetProcess *p)
{
	BpfSampler *s = userdata;

	return emit_process_at(s, p, s->end_mono);
}

static int on_side_band_record(void *userdata, const struct perf_event_header *raw,
			       const PerfRecord *rec)
{
	BpfSampler *s = userdata;
	uint32_t pid = record_pid(rec);
	size_t before = process_table_size(s->processes);
	const TargetProcess *p;
	bool cloned;
	int r;

	if (!record_is_target(s, pid))
		return 0;
	/* a fork copies its parent's space, which the consumer has too; else it joins from /proc */
	cloned = rec->type == PERF_RECORD_FORK && process_table_find(s->processes, rec->task.ppid);
	r = process_table_apply(s->processes, rec);
	for (size_t i = before; r >= 0 && !cloned && i < process_table_size(s->processes); i++)
		r = emit_process_at(s, process_table_at(s->processes, i), rec->id.time);
	if (r < 0)
		return r;
	p = process_table_find(s->processes, pid);
	return p && p->excluded ? 0 : emit(s, raw);
}

static int drain_side_band(BpfSampler *s)
{
	return side_band_drain(s->side_band, on_side_band_record, s);
}

/* The processes running now join the table; their threads count as threads_at_start. */
static int join_processes(BpfSampler *s)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n;
	int r;

	r = sampling_target_list_processes(s->target, &pids, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ pid_t *tids = NULL;
		TargetProcess *p;
		size_t n_tids;

		r = process_table_get(s->processes, (uint32_t)pids[i], &p);
		if (r >= 0)
			r = emit_process_at(s, p, clock_nanos(CLOCK_MONOTONIC));
		if (r < 0)
			return r;
		if (p->excluded)
			continue;
		if (task_list_read(pids[i], &tids, &n_tids) >= 0)
			s->threads_at_start += n_tids;
	}
	if (s->target->kind == SAMPLING_TARGET_PID && s->threads_at_start == 0)
		return -ESRCH;
	return 0;
}

static int apply_options(BpfSampler *s, const SamplingOptions *o)
{
	struct perf_event_attr base;
	int r;

	if (o->backend && strcmp(o->backend, "bpf") != 0 && strcmp(o->backend, "auto") != 0)
		return -EINVAL;
	r = sampling_request_clamp(o, &s->request);
	if (r < 0)
		return r;
	/* the event's type and config; the rest of a perf backend's attr does not apply */
	r = perf_event_attr_build(&(PerfEventConfig){ .event = o->event, .hz = s->request.hz }, &base);
	if (r < 0)
		return r;
	s->event = perf_event_name(o->event);
	s->attr = (struct perf_event_attr){
		.type = base.type,
		.size = sizeof(s->attr),
		.config = base.config,
		.sample_freq = s->request.hz,
		.freq = 1,
		.disabled = 1,
	};
	s->kernel = !o->exclude_kernel;
	s->explicit_sample_budget = o->sample_budget;
	s->sample_budget_limit = o->sample_budget_limit;
	s->sink = o->record_sink;
	s->sink_userdata = o->record_sink_userdata;
	return 0;
}

/*
 * Without a sink: a builder of many processes names the records here, with the
 * caller's resolve function or a frame-pointer StackResolver per process that
 * opens mapped files as the records say.
 */
static int new_builder(BpfSampler *s, const SamplingOptions *o,
		       const StackResolverOptions *resolver)
{
	StackResolverOptions ro = resolver ? *resolver : (StackResolverOptions){};
	SampleResolveFn resolve = o->resolve;
	void *resolve_userdata = o->resolve_userdata;
	int r;

	if (!resolve) {
		s->files = (RecordedFiles){ .inner = ro.files };
		s->opener = (TargetFileOpener){ recorded_files_open, &s->files };
		ro.mode = STACK_UNWIND_FP;
		ro.kernel = s->kernel;
		ro.files = &s->opener;
		ro.ns_pid = 0;
		r = process_resolvers_new(&ro, &s->resolvers);
		if (r < 0)
			return r;
		resolve = process_resolvers_resolve;
		resolve_userdata = s->resolvers;
	}
	r = profile_builder_new(0, NSEC_PER_SEC / s->request.hz, resolve, resolve_userdata,
				&s->builder);
	if (r < 0)
		return r;
	s->files.processes = profile_builder_get_processes(s->builder);
	return 0;
}

int bpf_sampler_new(const SamplingTarget *target, const SamplingOptions *options,
		    const StackResolverOptions *resolver, BpfSampler **ret)
{
	_cleanup_(bpf_sampler_freep) BpfSampler *s = NULL;
	static const SamplingOptions defaults = {};
	uint64_t cpu_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	int r;

	if (!target || !ret)
		return -EINVAL;
	r = bpf_sampler_probe();
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->target = target;
	s->loop = SESSION_LOOP_NULL;
	s->end_reason = "running";
	options = options ? options : &defaults;
	r = apply_options(s, options);
	if (r < 0)
		return r;
	r = sampling_target_describe(target, &s->target_name);
	if (r < 0)
		return r;

	r = process_table_new(&s->processes);
	if (r < 0)
		return r;
	/* the caller's rules decide each process, as for the perf backends */
	process_table_set_admit(s->processes, options->admit, options->admit_userdata);
	if (!s->sink) {
		r = new_builder(s, options, resolver);
		if (r < 0)
			return r;
	}

	r = session_loop_open(&s->loop, s->target->kind == SAMPLING_TARGET_PID ? s->target->pid : 0);
	if (r < 0)
		return r;
	r = open_events(s);
	if (r < 0)
		return r;
	r = load_program(s);
	if (r < 0)
		return r;
	/* the side band first: what changes while the running processes are read is not missed */
	r = side_band_open(target->kind == SAMPLING_TARGET_CGROUP ? target->cgroup_fd : -1,
			   target->kind == SAMPLING_TARGET_SYSTEM ? SIDE_BAND_BYTES_SYSTEM
								  : SIDE_BAND_BYTES,
			   &s->side_band);
	if (r >= 0)
		r = side_band_watch(s->side_band, &s->loop.timers, SOURCE_SIDE_BAND);
	if (r < 0)
		return r;
	r = join_processes(s);
	if (r < 0)
		return r;
	r = drain_side_band(s);
	if (r < 0)
		return r;

	s->loop.cpu_nanos = s->setup_cpu_nanos = clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	*ret = TAKE_PTR(s);
	return 0;
}

/*
 * The budget of sampling-session.c: a sample per period for each thread at
 * start, never more than there are CPUs (whatever many processes run).
 */
static uint64_t default_capacity(const BpfSampler *s)
{
	uint64_t threads = s->target->kind == SAMPLING_TARGET_PID ? s->threads_at_start : s->n_cpus;

	return sampling_default_budget(s->request.hz, s->request.duration, threads, s->n_cpus);
}

static int sampler_start(void *userdata)
{
	BpfSampler *s = userdata;
	int r;

	s->sample_budget = s->explicit_sample_budget ?: default_capacity(s);
	if (s->sample_budget_limit > 0 && s->sample_budget > s->sample_budget_limit)
		s->sample_budget = s->sample_budget_limit;
	s->skel->bss->max_samples = s->sample_budget;

	r = session_loop_arm(&s->loop, s->request.duration);
	if (s->builder)
		profile_builder_set_start(s->builder, s->loop.start_mono, s->loop.start_unix);
	if (r < 0)
		return r;
	/* attaching enables each event: sampling starts here */
	for (size_t i = 0; i < s->n_cpus; i++) {
		struct bpf_link *link;

		link = bpf_program__attach_perf_event(s->skel->progs.profile_sample, s->event_fds[i]);
		if (!link)
			return negative_errno();
		s->event_fds[i] = -1; /* the link closes it */
		s->links[s->n_links++] = link;
	}
	return 0;
}

static BpfCounters read_counters(const BpfSampler *s)
{
	const struct profile_bpf__bss *b = s->skel->bss;

	return (BpfCounters){
		.samples = __atomic_load_n(&b->samples, __ATOMIC_RELAXED),
		.dropped = __atomic_load_n(&b->dropped_samples, __ATOMIC_RELAXED),
		.lost_stacks = __atomic_load_n(&b->lost_stacks, __ATOMIC_RELAXED),
		.exec_errors = __atomic_load_n(&b->exec_errors, __ATOMIC_RELAXED),
		.budget_end_ns = __atomic_load_n(&b->budget_end_ns, __ATOMIC_RELAXED),
	};
}

/* What the program cost, when the kernel counts it (sysctl kernel.bpf_stats_enabled). */
static void read_program_stats(BpfSampler *s)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.profile_sample), &info, &len) < 0)
		return;
	s->program_runs = info.run_cnt;
	s->program_nanos = info.run_time_ns;
}

/* Named here: the profile, of what the target is, without times. */
static int finish_profile(BpfSampler *s)
{
	Profile *p;
	int r;

	/* the stack-quality report, over every process, once all are named */
	if (s->resolvers)
		(void)process_resolvers_finish(s->resolvers);
	profile_builder_set_duration(s->builder, s->end_mono - s->loop.start_mono);
	r = profile_builder_set_target(s->builder, s->target_name, s->target->unit);
	if (r < 0)
		return r;
	p = s->profile = profile_builder_steal_profile(s->builder);
	p->pid = s->target->kind == SAMPLING_TARGET_PID ? (uint32_t)s->target->pid : 0;
	p->multi_process = sampling_target_is_multi_process(s->target);
	p->untimed = true;
	return 0;
}

static int sampler_finish(void *userdata, const char *reason)
{
	BpfSampler *s = userdata;
	uint64_t cpu_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	int r, k;

	/* detaching stops the events; the maps keep what was counted */
	close_events(s);
	s->counters = read_counters(s);
	if (s->counters.budget_end_ns != 0) {
		reason = "buffer-full";
		s->end_mono = s->counters.budget_end_ns;
	} else
		s->end_mono = clock_nanos(CLOCK_MONOTONIC);
	if (s->end_mono < s->loop.start_mono)
		s->end_mono = s->loop.start_mono;
	read_program_stats(s);

	/* the last mappings first, then every bucket as a sample */
	r = drain_side_band(s);
	k = bpf_buckets_emit(s->skel, s->processes,
			     &(BpfBucketOutput){ .format = &record_format,
						 .time = s->end_mono,
						 .kernel = s->kernel,
						 .emit = emit,
						 .emit_process = emit_process,
						 .userdata = s },
			     &s->stats);
	if (r >= 0)
		r = k;
	if (s->builder) {
		k = finish_profile(s);
		if (r >= 0)
			r = k;
	}
	s->naming_cpu_nanos = clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;

	s->end_reason = reason;
	/* the maps are locked memory and the side band's rings too: give them back now */
	s->side_band_lost = side_band_lost(s->side_band);
	s->side_band_bytes = side_band_bytes(s->side_band);
	s->side_band = side_band_free(s->side_band);
	profile_bpf__destroy(s->skel);
	s->skel = NULL;
	return r;
}

static int sampler_drain(void *userdata)
{
	return drain_side_band(userdata);
}

static bool sampler_budget_reached(void *userdata)
{
	BpfSampler *s = userdata;

	return __atomic_load_n(&s->skel->bss->budget_end_ns, __ATOMIC_RELAXED) != 0;
}

static const SessionLoopOps sampler_loop_ops = {
	.start = sampler_start,
	.drain = sampler_drain,
	.budget_reached = sampler_budget_reached,
	.finish = sampler_finish,
};

SESSION_LOOP_DEFINE_CALLS(BpfSampler, bpf_sampler, sampler_loop_ops)

const Profile *bpf_sampler_get_profile(const BpfSampler *s)
{
	return s ? s->profile : NULL;
}

Profile *bpf_sampler_steal_profile(BpfSampler *s)
{
	if (!s || s->loop.phase != SESSION_PHASE_FINISHED)
		return NULL;
	return TAKE_PTR(s->profile);
}

const PerfRecordFormat *bpf_sampler_get_format(void)
{
	return &record_format;
}

uint64_t bpf_sampler_get_start(const BpfSampler *s)
{
	return s->loop.start_mono;
}

const ProcessTable *bpf_sampler_get_processes(const BpfSampler *s)
{
	return s ? s->processes : NULL;
}

void bpf_sampler_get_metrics(const BpfSampler *s, SamplingMetrics *ret)
{
	bool finished = s->loop.phase == SESSION_PHASE_FINISHED;
	bool sampling = s->loop.phase == SESSION_PHASE_SAMPLING;
	BpfCounters c = finished ? s->counters : sampling ? read_counters(s) : (BpfCounters){};
	uint64_t end = finished ? s->end_mono :
		       sampling ? clock_nanos(CLOCK_MONOTONIC) : s->loop.start_mono;

	ProfileBuilderStats built = {};

	if (s->builder)
		profile_builder_get_stats(s->builder, &built);
	*ret = (SamplingMetrics){
		/* live: what the program counted so far; final: what the records carry */
		.samples_captured = finished ? s->stats.samples_captured - s->sink_dropped : c.samples,
		.samples_dropped = c.dropped + s->sink_dropped,
		.threads_seen = s->stats.threads_seen.count,
		.threads_at_start = s->threads_at_start,
		.duration_nanos = end - s->loop.start_mono,
		.buffer_full = c.budget_end_ns != 0,
		.start_unix_nanos = s->loop.start_unix,
		.backend = "bpf",
		.event = s->event,
		.end_reason = s->end_reason,
		.sample_budget = s->sample_budget,
		.ring_bytes = s->side_band ? side_band_bytes(s->side_band) : s->side_band_bytes,
		.collector_cpu_nanos = s->loop.cpu_nanos,
		/* named here: what the resolvers could not name too */
		.unwind_failures = s->stats.lost_user_stacks + built.unwind_failures,
		.truncated_stacks = s->stats.truncated_stacks,
		.target = s->target_name,
		.untimed = true,
		.processes_seen = s->stats.processes_seen.count,
		.processes_excluded = s->stats.processes_excluded.count,
		.samples_excluded = s->stats.samples_excluded,
		.lost_stacks = c.lost_stacks,
		.map_full_samples = c.dropped,
		.exec_errors = c.exec_errors,
		.side_band_lost = s->side_band ? side_band_lost(s->side_band) : s->side_band_lost,
		.aggregated_buckets = s->stats.buckets,
		.bpf_program_runs = s->program_runs,
		.bpf_program_nanos = s->program_nanos,
		.bpf_setup_cpu_nanos = s->setup_cpu_nanos,
		.bpf_naming_cpu_nanos = s->naming_cpu_nanos,
	};
	sampling_request_to_metrics(&s->request, ret);
	pause_estimate(&(PerfEventConfig){ .hz = s->request.hz }, ret);
}
