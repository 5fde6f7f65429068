/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "collector.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "backend-choice.h"
#include "backlog-consumer.h"
#include "backlog.h"
#include "bpf-sampler.h"
#include "cleanup.h"
#include "dwarf-unwind.h"
#include "io-util.h"
#include "perf-event.h"
#include "process-resolvers.h"
#include "process-table.h"
#include "profile-builder.h"
#include "target-file-cache.h"
#include "tid-set.h"
#include "recorded-files.h"
#include "target-snapshot.h"
#include "time-util.h"

/* The default cap absorbs a one-second unwind stall at this rate on every CPU. */
#define BACKLOG_DEFAULT_HZ 999U
/* Records the unwinder must not miss (mappings, names) may use this last part; samples not. */
#define BACKLOG_RESERVE_DIVISOR 16
/* How long bpf's samples, which come all at once at the end, wait for room (milliseconds). */
#define BPF_PUSH_WAIT_MS 10000U

struct Collector {
	SamplingSession *session;
	StackResolver *resolver;
	/* without a caller's opener: the target's files, opened as it maps them (drain thread) */
	TargetFileCache *file_cache;
	TargetFileOpener file_opener;
	/* a multi-process target: a resolver per process, opening files as the records say */
	ProcessResolvers *resolvers;
	RecordedFiles files;
	TargetFileOpener opener;
	/* the bpf backend: its records, weighted samples at the end, go to the backlog too */
	BpfSampler *bpf;
	bool aggregated;            /* bpf: set before its sampler writes the first record */
	SamplingTarget *own_target; /* bpf of one process: its target */
	const char *backend_reason;
	TargetFilePolicy file_policy; /* kernel symbols only with kernel frames */
	/* a multi-process target consumed elsewhere: whose files the consumer may have */
	const SamplingTarget *target;
	ProcessAdmitFn admit;
	void *admit_userdata;
	/* consumed elsewhere: the processes' mappings as the records told (the drain
	 * thread's, under recorded_lock): files of a process of many gone before the
	 * consumer asked for them, and what a consumer that starts over is told first */
	ProcessTable *recorded;
	pthread_mutex_t recorded_lock;
	/* processes past max_recorded (recorded_lock), and their samples (atomic) */
	TidSet unrecorded;
	uint64_t n_unrecorded, samples_unrecorded;
	uint32_t max_recorded; /* later processes are named only while they run */
	ProfileBuilder *builder;      /* NULL when the backlog is consumed elsewhere */
	BacklogConsumer *consumer;
	Backlog *backlog;              /* NULL once taken (collector_take_backlog()) */
	uint64_t backlog_bytes;
	bool elsewhere;               /* consumed by another process (collector_consumer_done()) */
	PerfRecordFormat format;
	uint64_t sample_limit; /* samples may fill the backlog up to here */
	uint32_t stack_bytes;  /* copied per sample */
	CollectorCheckFn check;
	void *check_userdata;
	int done_fd;           /* eventfd: written once, when everything is final */
	uint64_t setup_cpu_nanos;

	pthread_t drain_thread, unwind_thread;
	bool have_drain_thread, have_unwind_thread, joined;

	pthread_mutex_t lock; /* everything below */
	pthread_cond_t wake_drain;
	bool start_requested, quit;
	uint64_t start_mono, start_unix;
	SamplingMetrics drained;   /* the session's metrics after the latest drain */
	ProfileBuilderStats built; /* the builder's, after the latest batch */
	uint64_t drain_cpu_nanos, unwind_cpu_nanos, backlog_peak;
	uint64_t consumer_throttled_nanos; /* a consumer elsewhere held back by its server */
	uint64_t samples_after_cutoff;
	uint64_t cutoff_duration_nanos; /* with a cut-off: the window kept */
	uint64_t samples_pushed;        /* drained into the backlog: what a consumer may report at most */
	bool cut_off, drain_done, consumer_done, finished;
	bool consumer_warm; /* a consumer elsewhere: its resolver knew the executable */
	uint32_t consumer_restarts; /* a consumer elsewhere that started over (its last one died) */
	uint64_t samples_lost_consumer; /* ... the samples its dead ones took with them */
	bool target_execed; /* a COMM record of an exec came (drain thread; atomic) */
	uint32_t stack_bytes_needed; /* what the resolver's walks needed (metrics.h), 0 unknown */
	StackQuality *quality; /* a consumer elsewhere: its counts, as checked */
	int error;
};

int collector_default_max_backlog(uint64_t *ret)
{
	PerfEventConfig config = { .dwarf = true, .stack_bytes = SAMPLING_DEFAULT_STACK_BYTES };
	size_t n;
	int r;

	r = perf_online_cpu_count(&n);
	if (r < 0)
		return r;
	*ret = (uint64_t)BACKLOG_DEFAULT_HZ * n * perf_event_max_sample_size(&config);
	return 0;
}

static void collector_set_error_locked(Collector *c, int error)
{
	if (c->error == 0)
		c->error = error;
}

static void collector_set_error(Collector *c, int error)
{
	pthread_mutex_lock(&c->lock);
	collector_set_error_locked(c, error);
	pthread_mutex_unlock(&c->lock);
}

/* Called with the lock held once the drain or the consumer ended: done when both did. */
static void collector_maybe_finish_locked(Collector *c)
{
	uint64_t one = 1;

	if (c->finished || !c->drain_done || !c->consumer_done)
		return;
	c->finished = true;
	(void)!write(c->done_fd, &one, sizeof(one));
}

/* ---- the drain thread: rings -> backlog ---- */

/* Open a file the target maps now, while it can vouch for it: unwinding comes later. */
static void collector_note_mapping(Collector *c, const PerfRecordMmap2 *m)
{
	ProcessMapping mapping = process_mapping_from_mmap2(m);

	(void)target_file_cache_note_mapping(c->file_cache, m->pid, &mapping);
}

/* Keep what a record says of a process's mappings, up to max_recorded processes. */
static void collector_record_process(Collector *c, const PerfRecord *rec)
{
	uint32_t pid;

	switch (rec->type) {
	case PERF_RECORD_MMAP2:
		pid = rec->mmap2.pid;
		break;
	case PERF_RECORD_COMM:
		pid = rec->comm.pid;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		pid = rec->task.pid;
		break;
	default:
		return;
	}
	pthread_mutex_lock(&c->recorded_lock);
	/* a table that cannot grow only misses files of processes that exit early */
	if (process_table_find(c->recorded, pid) ||
	    process_table_size(c->recorded) < c->max_recorded)
		(void)process_table_apply(c->recorded, rec);
	else if (tid_set_add(&c->unrecorded, pid) > 0) /* counted, with its samples */
		__atomic_store_n(&c->n_unrecorded, c->unrecorded.count, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->recorded_lock);
}

/* Samples of a process past the cap: they may be unnamed once the process is gone. */
static void collector_count_unrecorded(Collector *c, uint32_t pid, uint64_t samples)
{
	bool unrecorded;

	if (__atomic_load_n(&c->n_unrecorded, __ATOMIC_RELAXED) == 0)
		return;
	pthread_mutex_lock(&c->recorded_lock);
	unrecorded = tid_set_contains(&c->unrecorded, pid);
	pthread_mutex_unlock(&c->recorded_lock);
	if (unrecorded)
		__atomic_add_fetch(&c->samples_unrecorded, samples, __ATOMIC_RELAXED);
}

static bool collector_consumer_gone(Collector *c)
{
	bool done;

	pthread_mutex_lock(&c->lock);
	done = c->consumer_done;
	pthread_mutex_unlock(&c->lock);
	return done;
}

/*
 * bpf's samples come all at once at the end, each a whole bucket: rather than
 * drop counts the consumer would take a moment later, wait for it to make
 * room (while it lives, within BPF_PUSH_WAIT_MS).
 */
static int collector_push_waiting(Collector *c, const struct perf_event_header *raw,
				  const PerfRecord *rec)
{
	uint64_t limit = rec->type == PERF_RECORD_SAMPLE ? c->sample_limit : UINT64_MAX;
	int r = backlog_push(c->backlog, raw, limit);

	for (unsigned ms = 0; r == -ENOBUFS && ms < BPF_PUSH_WAIT_MS; ms++) {
		if (collector_consumer_gone(c))
			break;
		backlog_notify(c->backlog);
		(void)nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		r = backlog_push(c->backlog, raw, limit);
	}
	return r;
}

/* SamplingRecordFn: everything the session keeps goes to the backlog. */
static int collector_push(void *userdata, const struct perf_event_header *raw, const PerfRecord *rec)
{
	Collector *c = userdata;

	if (c->file_cache && rec->type == PERF_RECORD_MMAP2)
		collector_note_mapping(c, &rec->mmap2);
	if (rec->type == PERF_RECORD_COMM && rec->comm.exec)
		__atomic_store_n(&c->target_execed, true, __ATOMIC_RELAXED);
	if (c->recorded && rec->type == PERF_RECORD_SAMPLE)
		collector_count_unrecorded(c, rec->sample.pid, rec->sample.weight ?: 1);
	else if (c->recorded)
		collector_record_process(c, rec);

	return c->aggregated ? collector_push_waiting(c, raw, rec) :
		backlog_push(c->backlog, raw,
			     rec->type == PERF_RECORD_SAMPLE ? c->sample_limit : UINT64_MAX);
}

/* Ask the check; on success the backlog may hand out records up to now. */
static int collector_run_check(Collector *c, uint64_t *ret_watermark)
{
	uint64_t t = clock_nanos(CLOCK_MONOTONIC);

	if (!c->check)
		return 0;
	if (c->check(c->check_userdata) < 0)
		return -EPERM;
	*ret_watermark = t;
	if (c->backlog) /* bpf has none: its counts carry no times to hold back */
		backlog_set_watermark(c->backlog, t);
	return 0;
}

/* What the backend, the perf session or the bpf sampler, has sampled so far. */
static void backend_get_metrics(const Collector *c, SamplingMetrics *ret)
{
	if (c->bpf)
		bpf_sampler_get_metrics(c->bpf, ret);
	else
		sampling_session_get_metrics(c->session, ret);
}

static uint64_t backend_get_start(const Collector *c)
{
	return c->bpf ? bpf_sampler_get_start(c->bpf) : sampling_session_get_start(c->session);
}

/* Take what the backend has; > 0 while it goes on. */
static int backend_process(Collector *c)
{
	return c->bpf ? bpf_sampler_process(c->bpf) : sampling_session_process(c->session);
}

/* Until the backend has something to process. */
static int backend_wait(Collector *c)
{
	struct epoll_event ev[8];

	if (c->bpf) {
		struct pollfd p = { .fd = bpf_sampler_get_fd(c->bpf), .events = POLLIN };

		return poll(&p, 1, -1) < 0 ? negative_errno() : 0;
	}
	/* the rings are edge-triggered: their events must be taken, not only polled */
	return epoll_wait(sampling_session_get_fd(c->session), ev, ELEMENTSOF(ev), -1) < 0 ?
		negative_errno() : 0;
}

static void collector_publish_drain(Collector *c)
{
	SamplingMetrics m;

	backend_get_metrics(c, &m);
	pthread_mutex_lock(&c->lock);
	c->drained = m;
	c->samples_pushed = m.samples_captured;
	c->drain_cpu_nanos = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	c->backlog_peak = backlog_get_peak(c->backlog);
	pthread_mutex_unlock(&c->lock);
	backlog_notify_batched(c->backlog, clock_nanos(CLOCK_MONOTONIC));
}

static void collector_drain_loop(Collector *c, uint64_t watermark)
{
	uint64_t cutoff = UINT64_MAX;
	int r;

	for (;;) {
		if (cutoff == UINT64_MAX && collector_run_check(c, &watermark) < 0) {
			/*
			 * the target changed hands: nothing from after the last good check is
			 * kept (bpf's samples all come at the end, after the cut-off: none)
			 */
			cutoff = watermark;
			pthread_mutex_lock(&c->lock);
			c->cut_off = true;
			pthread_mutex_unlock(&c->lock);
			collector_stop(c);
		}
		r = backend_process(c);
		if (r < 0)
			collector_set_error(c, r);
		collector_publish_drain(c);
		if (r <= 0)
			break;
		r = backend_wait(c);
		if (r < 0 && r != -EINTR) {
			collector_set_error(c, r);
			collector_stop(c);
		}
	}
	if (cutoff != UINT64_MAX) {
		pthread_mutex_lock(&c->lock);
		c->cutoff_duration_nanos = cutoff > c->start_mono ? cutoff - c->start_mono : 0;
		pthread_mutex_unlock(&c->lock);
	}
	backlog_close(c->backlog, cutoff);
}

/* Until start() or free(): true when sampling was started. */
static bool collector_wait_start(Collector *c)
{
	bool start;

	pthread_mutex_lock(&c->lock);
	while (!c->start_requested && !c->quit)
		pthread_cond_wait(&c->wake_drain, &c->lock);
	start = c->start_requested;
	pthread_mutex_unlock(&c->lock);
	return start;
}

/* The drain thread of either backend. */
static void *collector_drain_main(void *arg)
{
	Collector *c = arg;
	uint64_t watermark = 0;
	bool start = collector_wait_start(c);

	if (start) {
		watermark = backlog_get_watermark(c->backlog);
		collector_drain_loop(c, watermark);
	} else
		backlog_close(c->backlog, 0); /* never started: nothing to keep */
	pthread_mutex_lock(&c->lock);
	c->drain_done = true;
	if (!start && c->elsewhere)
		c->consumer_done = true; /* nobody was ever given the backlog */
	collector_maybe_finish_locked(c);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* ---- the unwind thread: backlog -> profile ---- */

static void collector_publish_unwind(Collector *c)
{
	ProfileBuilderStats stats;

	profile_builder_get_stats(c->builder, &stats);
	pthread_mutex_lock(&c->lock);
	c->built = stats;
	c->unwind_cpu_nanos = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	pthread_mutex_unlock(&c->lock);
}

static void collector_unwind_loop(Collector *c)
{
	for (;;) {
		int r = backlog_consumer_step(c->consumer, 256);

		if (r == 0)
			break;
		if (r == -EAGAIN) {
			collector_publish_unwind(c);
			(void)backlog_wait(c->backlog, -1);
			continue;
		}
		if (r < 0) {
			collector_set_error(c, r);
			/* nothing to build with: end the window, keep what was built */
			collector_stop(c);
			if (r == -EBADMSG)
				break; /* a backlog we cannot read: nothing more to take */
		}
		collector_publish_unwind(c);
	}
}

static void *collector_unwind_main(void *arg)
{
	Collector *c = arg;

	collector_unwind_loop(c);
	/* names JIT code whose records arrived late (no sample waits for them) */
	if (c->resolver)
		(void)stack_resolver_finish(c->resolver);
	else if (c->resolvers)
		(void)process_resolvers_finish(c->resolvers);
	collector_publish_unwind(c);
	pthread_mutex_lock(&c->lock);
	if (c->resolver && c->stack_bytes > 0)
		c->stack_bytes_needed = stack_resolver_stack_bytes_needed(c->resolver, c->stack_bytes,
									  SAMPLING_MAX_STACK_BYTES);
	c->samples_after_cutoff = backlog_consumer_get_discarded(c->consumer);
	profile_builder_set_duration(c->builder, c->cut_off ? c->cutoff_duration_nanos
							    : c->drained.duration_nanos);
	c->consumer_done = true;
	collector_maybe_finish_locked(c);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* ---- lifecycle ---- */

static void collector_join(Collector *c)
{
	if (c->joined)
		return;
	if (c->have_drain_thread)
		pthread_join(c->drain_thread, NULL);
	else if (c->backlog)
		backlog_close(c->backlog, 0); /* lets the unwind thread end */
	if (c->have_unwind_thread)
		pthread_join(c->unwind_thread, NULL);
	c->joined = true;
}

Collector *collector_free(Collector *c)
{
	if (!c)
		return NULL;
	if (c->have_drain_thread || c->have_unwind_thread) {
		collector_stop(c);
		pthread_mutex_lock(&c->lock);
		c->quit = true;
		pthread_cond_signal(&c->wake_drain);
		pthread_mutex_unlock(&c->lock);
		collector_join(c);
	}
	sampling_session_free(c->session);
	bpf_sampler_free(c->bpf);
	sampling_target_free(c->own_target);
	backlog_consumer_free(c->consumer);
	/* the resolvers' callbacks are done, and their file opener reads the builder's table */
	process_resolvers_free(c->resolvers);
	stack_resolver_free(c->resolver);
	target_file_cache_free(c->file_cache);
	process_table_free(c->recorded);
	tid_set_clear(&c->unrecorded);
	pthread_mutex_destroy(&c->recorded_lock);
	profile_builder_free(c->builder);
	backlog_free(c->backlog);
	stack_quality_free(c->quality);
	safe_close(c->done_fd);
	pthread_cond_destroy(&c->wake_drain);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

void collector_freep(Collector **c)
{
	collector_free(*c);
}

/* 'many': processes named by their records (pid 0); 'backend' the one chosen. */
static int collector_new_resolver(Collector *c, const CollectorOptions *o, const char *backend,
				  bool many, SampleResolveFn *ret_fn, void **ret_userdata)
{
	StackResolverOptions ro = o->resolver;
	int r;

	if (o->sampling.resolve) {
		*ret_fn = o->sampling.resolve;
		*ret_userdata = o->sampling.resolve_userdata;
		return 0;
	}
	/* bpf's callchains are the kernel's frame-pointer walks */
	if (strcmp(backend, "bpf") == 0)
		ro.mode = STACK_UNWIND_FP;
	else {
		r = stack_unwind_mode_from_backend(backend, &ro.mode);
		if (r < 0)
			return r;
	}
	ro.kernel = !o->sampling.exclude_kernel;
	if (c->file_cache)
		ro.files = &c->file_opener;
	if (many) {
		/* the builder's process table is set once it exists */
		c->files = (RecordedFiles){ .inner = ro.files };
		c->opener = (TargetFileOpener){ recorded_files_open, &c->files };
		ro.files = &c->opener;
		ro.ns_pid = 0;
		r = process_resolvers_new(&ro, &c->resolvers);
		if (r < 0)
			return r;
		*ret_fn = process_resolvers_resolve;
		*ret_userdata = c->resolvers;
		return 0;
	}
	r = stack_resolver_new(&ro, &c->resolver);
	if (r < 0)
		return r;
	*ret_fn = stack_resolver_resolve;
	*ret_userdata = c->resolver;
	return 0;
}

static int collector_new_backlog(Collector *c, const CollectorOptions *o)
{
	uint64_t cap = o->max_backlog_bytes, want;
	int r;

	if (cap == 0) {
		r = collector_default_max_backlog(&cap);
		if (r < 0)
			return r;
	}
	/*
	 * A second of this session's records at most, within the cap; many processes
	 * (and bpf, whose samples all come at the end) take the whole cap: each new
	 * process costs the unwinder a cold start.
	 */
	want = !c->session || sampling_session_get_pid(c->session) == 0 ? cap :
		sampling_session_max_bytes_per_second(c->session);
	if (want > cap)
		want = cap;
	/* one the consumer had before: its pages are there already, no fault on the way */
	if (o->reuse_backlog && *o->reuse_backlog && backlog_reset(*o->reuse_backlog, want) == 0)
		c->backlog = TAKE_PTR(*o->reuse_backlog);
	else {
		r = backlog_new(want, &c->backlog);
		if (r < 0)
			return r;
	}
	c->backlog_bytes = backlog_get_size(c->backlog);
	c->sample_limit = c->backlog_bytes - c->backlog_bytes / BACKLOG_RESERVE_DIVISOR;
	return 0;
}

/* ---- the backends: perf rings, or bpf counts in the kernel (its records samples last) ---- */

/* Consumed elsewhere: the processes as their records tell, kept (see 'recorded'). */
static int collector_record_processes(Collector *c, const CollectorOptions *o)
{
	if (!c->elsewhere)
		return 0;
	c->max_recorded = o->max_recorded_processes ?: COLLECTOR_RECORDED_PROCESSES_MAX;
	return process_table_new(&c->recorded);
}

/* A target of many processes (and bpf's, of one too): named by the records of each. */
static int collector_track_processes(Collector *c, const SamplingTarget *target,
				     const CollectorOptions *o)
{
	c->target = target;
	c->admit = o->sampling.admit;
	c->admit_userdata = o->sampling.admit_userdata;
	return collector_record_processes(c, o);
}

static int collector_new_bpf(Collector *c, pid_t pid, const CollectorOptions *o,
			     SamplingMetrics *ret)
{
	SamplingOptions so = o->sampling;
	const SamplingTarget *target = so.target;
	int r;

	if (so.resolve)
		return -EINVAL; /* its records are named by a resolver of the collector's */
	if (!target) {
		r = sampling_target_new_pid(pid, &c->own_target);
		if (r < 0)
			return r;
		target = c->own_target;
	}
	r = collector_track_processes(c, target, o);
	if (r < 0)
		return r;
	/* the sampler writes records from new() on: the backlog is there first */
	c->format = *bpf_sampler_get_format();
	r = collector_new_backlog(c, o);
	if (r < 0)
		return r;
	c->aggregated = true;
	so.record_sink = collector_push;
	so.record_sink_userdata = c;
	r = bpf_sampler_new(target, &so, NULL, &c->bpf);
	if (r < 0)
		return r;
	bpf_sampler_get_metrics(c->bpf, ret);
	return 0;
}

static int collector_new_perf(Collector *c, pid_t pid, const CollectorOptions *o,
			      const char *backend, SamplingMetrics *ret)
{
	SamplingOptions so = o->sampling;
	int r;

	so.backend = backend;
	if (so.target && sampling_target_is_multi_process(so.target))
		r = collector_track_processes(c, so.target, o);
	else /* one process: for a consumer that starts over (collector_consumer_restart()) */
		r = collector_record_processes(c, o);
	if (r < 0)
		return r;
	/* one process: its files opened as it maps them (many: recorded-files.h) */
	if (!o->resolver.files && !so.resolve && !c->target) {
		r = target_file_cache_new((uint32_t)(so.target ? so.target->pid : pid), &c->file_policy,
					  &c->file_cache);
		if (r < 0)
			return r;
		c->file_opener = (TargetFileOpener){ target_file_cache_open, c->file_cache };
	}
	so.record_sink = collector_push;
	so.record_sink_userdata = c;
	r = sampling_session_new(pid, &so, &c->session);
	if (r < 0)
		return r;
	c->format = *sampling_session_get_format(c->session);
	sampling_session_get_metrics(c->session, ret);
	c->stack_bytes = ret->stack_bytes;
	return collector_new_backlog(c, o);
}

/* The backlog consumed here: a resolver, a builder and the unwind thread. */
static int collector_new_consumer(Collector *c, const CollectorOptions *o, const char *backend,
				  const SamplingMetrics *m)
{
	/* bpf's are processes named by their records, even of one process */
	uint32_t pid = c->session ? (uint32_t)sampling_session_get_pid(c->session) : 0;
	SampleResolveFn resolve = NULL;
	void *resolve_userdata = NULL;
	int r;

	r = collector_new_resolver(c, o, backend, pid == 0, &resolve, &resolve_userdata);
	if (r < 0)
		return r;
	r = profile_builder_new(pid, m->period_nanos, resolve, resolve_userdata, &c->builder);
	if (r >= 0 && c->resolvers) /* what a process that exited kept goes with it */
		profile_builder_set_exit_hook(c->builder, process_resolvers_exited, c->resolvers);
	if (r >= 0)
		r = profile_builder_set_target(c->builder, m->target,
					       o->sampling.target ? o->sampling.target->unit : NULL);
	if (r >= 0)
		r = backlog_consumer_new(c->backlog, &c->format, c->builder, &c->consumer);
	if (r < 0)
		return r;
	c->files.processes = profile_builder_get_processes(c->builder);
	r = pthread_create(&c->unwind_thread, NULL, collector_unwind_main, c);
	if (r > 0)
		return -r;
	c->have_unwind_thread = true;
	return 0;
}

int collector_new(pid_t pid, const CollectorOptions *options, Collector **ret)
{
	_cleanup_collector_ Collector *c = NULL;
	uint64_t cpu_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	BackendChoice choice;
	SamplingMetrics m;
	int r;

	if (!ret || options->sampling.record_sink)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->done_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->recorded_lock, NULL);
	pthread_cond_init(&c->wake_drain, NULL);
	c->check = options->check;
	c->check_userdata = options->check_userdata;

	r = sampling_backend_choose(options->sampling.backend,
				    options->sampling.target ? options->sampling.target->kind
							     : SAMPLING_TARGET_PID,
				    &choice);
	if (r < 0)
		return r;
	c->backend_reason = choice.reason;
	c->elsewhere = options->unwind_elsewhere;
	/* a consumer elsewhere takes the records, and resolves with its own */
	if (c->elsewhere && (options->sampling.resolve || options->resolver.files))
		return -EOPNOTSUPP;
	c->file_policy.no_kernel_symbols = options->sampling.exclude_kernel;
	c->file_policy.kernel_table = options->kernel_table;
	c->file_policy.fetch = options->debug_fetch;
	c->file_policy.debug_substitute = options->debug_substitute;

	if (strcmp(choice.backend, "bpf") == 0)
		r = collector_new_bpf(c, pid, options, &m);
	else
		r = collector_new_perf(c, pid, options, choice.backend, &m);
	if (r < 0)
		return r;
	c->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->done_fd < 0)
		return negative_errno();
	if (!c->elsewhere) {
		r = collector_new_consumer(c, options, choice.backend, &m);
		if (r < 0)
			return r;
	}
	r = pthread_create(&c->drain_thread, NULL, collector_drain_main, c);
	if (r > 0)
		return -r;
	c->have_drain_thread = true;

	c->drained = m;
	c->setup_cpu_nanos = clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	*ret = TAKE_PTR(c);
	return 0;
}

int collector_start(Collector *c)
{
	uint64_t cpu_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID), watermark = 0;
	SamplingMetrics m;
	int r;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	r = c->start_requested ? -EALREADY : 0;
	pthread_mutex_unlock(&c->lock);
	if (r < 0)
		return r;
	r = collector_run_check(c, &watermark);
	if (r < 0)
		return r;
	r = c->bpf ? bpf_sampler_start(c->bpf) : sampling_session_start(c->session);
	if (r < 0)
		return r;
	backend_get_metrics(c, &m);
	/* before the drain thread pushes the first sample */
	backlog_set_start(c->backlog, backend_get_start(c), m.start_unix_nanos);

	pthread_mutex_lock(&c->lock);
	c->start_mono = backend_get_start(c);
	c->start_unix = m.start_unix_nanos;
	c->drained = m;
	c->start_requested = true;
	c->setup_cpu_nanos += clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	pthread_cond_signal(&c->wake_drain);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void collector_stop(Collector *c)
{
	/* only write()s an eventfd: async-signal-safe */
	if (c && c->bpf)
		bpf_sampler_stop(c->bpf);
	else if (c)
		sampling_session_stop(c->session);
}

int collector_get_fd(const Collector *c)
{
	return c ? c->done_fd : -EINVAL;
}

bool collector_is_finished(Collector *c)
{
	bool finished;

	pthread_mutex_lock(&c->lock);
	finished = c->finished;
	pthread_mutex_unlock(&c->lock);
	return finished;
}

int collector_wait(Collector *c)
{
	struct pollfd p = { .fd = c->done_fd, .events = POLLIN };
	int error;

	pthread_mutex_lock(&c->lock);
	if (!c->start_requested) {
		/* never started: nothing will ever finish it but ending the threads */
		c->quit = true;
		pthread_cond_signal(&c->wake_drain);
	}
	pthread_mutex_unlock(&c->lock);
	while (!collector_is_finished(c))
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return negative_errno();
	collector_join(c);
	pthread_mutex_lock(&c->lock);
	error = c->error;
	pthread_mutex_unlock(&c->lock);
	return error;
}

void collector_get_metrics(Collector *c, SamplingMetrics *ret)
{
	SamplingMetrics m;

	pthread_mutex_lock(&c->lock);
	m = c->drained;
	m.backend_reason = c->backend_reason;
	m.collector_cpu_nanos = c->setup_cpu_nanos + c->drain_cpu_nanos + c->unwind_cpu_nanos;
	if (c->bpf) {
		/*
		 * the sampler knows the stacks it could not store and the walks it
		 * saw stop early; the consumer, what it could not name, at its cost
		 */
		m.unwind_failures += c->built.unwind_failures;
		m.bpf_naming_cpu_nanos = c->unwind_cpu_nanos;
	} else {
		m.unwind_failures = c->built.unwind_failures;
		m.truncated_stacks = c->built.truncated_stacks;
	}
	m.stack_bytes_needed = c->stack_bytes_needed;
	m.backlog_bytes = c->backlog_bytes;
	m.backlog_peak_bytes = c->backlog_peak;
	m.consumer_throttled_nanos = c->consumer_throttled_nanos;
	m.processes_unrecorded = __atomic_load_n(&c->n_unrecorded, __ATOMIC_RELAXED);
	m.samples_unrecorded = __atomic_load_n(&c->samples_unrecorded, __ATOMIC_RELAXED);
	m.unwinder_restarts = c->consumer_restarts;
	m.samples_lost_unwinder = c->samples_lost_consumer;
	if (c->finished) {
		/* what the profile holds: the drain's count less what the cut-off discarded */
		m.samples_captured = c->built.samples;
		m.samples_after_cutoff = c->samples_after_cutoff;
	}
	if (c->cut_off) {
		m.end_reason = "credentials-changed";
		if (c->finished)
			m.duration_nanos = c->cutoff_duration_nanos;
	}
	pthread_mutex_unlock(&c->lock);
	*ret = m;
}

Profile *collector_steal_profile(Collector *c)
{
	Profile *p;

	if (!collector_is_finished(c) || !c->builder)
		return NULL;
	p = profile_builder_steal_profile(c->builder);
	if (p && c->bpf) {
		/* counts without times, of one process or many */
		p->untimed = true;
		p->pid = c->target->kind == SAMPLING_TARGET_PID ? (uint32_t)c->target->pid : 0;
		p->multi_process = sampling_target_is_multi_process(c->target);
	}
	return p;
}

const char *collector_cache_state(Collector *c)
{
	if (!collector_is_finished(c) || c->bpf)
		return NULL; /* bpf: no one executable to ask about */
	if (c->elsewhere)
		return c->consumer_warm ? "warm" : "cold";
	if (!c->resolver)
		return NULL; /* per-process resolvers and bpf: no one executable to ask about */
	return stack_resolver_cache_state(c->resolver);
}

bool collector_target_execed(Collector *c)
{
	return __atomic_load_n(&c->target_execed, __ATOMIC_RELAXED);
}

Backlog *collector_take_backlog(Collector *c)
{
	bool clean;

	if (!collector_is_finished(c))
		return NULL;
	pthread_mutex_lock(&c->lock);
	/* a consumer that died on it or failed may have left it anywhere */
	clean = c->elsewhere && c->consumer_done && c->consumer_restarts == 0 && c->error == 0;
	pthread_mutex_unlock(&c->lock);
	return clean ? TAKE_PTR(c->backlog) : NULL;
}

/* ---- a consumer elsewhere ---- */

int collector_get_backlog(Collector *c, int *ret_memfd, int *ret_eventfd)
{
	if (!c->elsewhere)
		return -EINVAL;
	*ret_memfd = backlog_get_memfd(c->backlog);
	*ret_eventfd = backlog_get_eventfd(c->backlog);
	return 0;
}

const PerfRecordFormat *collector_get_format(const Collector *c)
{
	return &c->format;
}

/* Is the process behind the pidfd still there (it has not exited)? */
static int collector_process_end(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	if (poll(&p, 1, 0) < 0)
		return negative_errno();
	return p.revents & (POLLIN | POLLHUP | POLLNVAL) ? -ESRCH : 0;
}

/*
 * A process of a multi-process target that a consumer names: only while it is
 * in the target and passes the admit rule. The pidfd (*ret_pidfd) is held
 * across the checks and what follows (collector_process_end()), so a pid
 * reused meanwhile is refused.
 */
static int collector_process_begin(Collector *c, uint32_t pid, int *ret_pidfd)
{
	_cleanup_close_ int pidfd = -1;
	int r;

	if (!c->target || pid == 0 || pid > INT32_MAX)
		return -EPERM;
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pidfd < 0)
		return errno == EINVAL ? -ESRCH : negative_errno();
	r = sampling_target_has_process(c->target, (pid_t)pid);
	if (r < 0)
		return r;
	if (r == 0 || (c->admit && !c->admit(c->admit_userdata, pid))) {
		/* one that exited meanwhile is gone, not refused: its records may still name it */
		r = collector_process_end(pidfd);
		return r < 0 ? r : -EPERM;
	}
	*ret_pidfd = TAKE_FD(pidfd);
	return 0;
}

/*
 * The mapping a process of the session had at the request's address, as its
 * MMAP2 record gave it, with the process whose record that is in *ret_pid: the
 * process's own, or, for one past max_recorded (its records came, so it was
 * admitted, but were not kept), the same file (device and inode) as a
 * recorded process mapped it: a churning machine's later processes map the
 * files its earlier ones did.
 */
static int collector_recorded_mapping(Collector *c, const TargetFileRequest *request,
				      ProcessMapping *ret, char **ret_path, uint32_t *ret_pid)
{
	const ProcessMapping *found;
	uint32_t pid = request->pid;
	char *path = NULL;
	bool match;

	pthread_mutex_lock(&c->recorded_lock);
	found = process_table_find_mapping(c->recorded, pid, request->address);
	if (!found && request->inode != 0 && tid_set_contains(&c->unrecorded, pid))
		found = process_table_find_file(c->recorded, request->dev_major,
						request->dev_minor, request->inode, &pid);
	match = found && (request->inode == 0 ||
			  (found->inode == request->inode && found->dev_major == request->dev_major &&
			   found->dev_minor == request->dev_minor));
	if (match) {
		*ret = *found;
		ret->path = NULL;
		path = strdup(found->path);
	}
	pthread_mutex_unlock(&c->recorded_lock);
	if (!match)
		return -ESRCH;
	if (!path)
		return -ENOMEM;
	*ret_path = path;
	*ret_pid = pid;
	return 0;
}

/*
 * A file of a process that is gone, by what its records (which came only
 * because it was admitted) said: the very file (device and inode) it mapped
 * at the request's address, whatever the pid is now; debug files only as
 * root's (its own uid is not known any more). One past max_recorded gets the
 * files other processes' records name (collector_recorded_mapping()).
 */
static int collector_open_recorded_file(Collector *c, const TargetFileRequest *request)
{
	static const TargetOwner root_only = {};
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	ProcessMapping m;
	struct stat st;
	uint32_t pid;
	bool known;
	int r;

	switch (request->kind) {
	case TARGET_FILE_MAPPED:
		r = collector_recorded_mapping(c, request, &m, &path, &pid);
		if (r < 0)
			return r;
		fd = target_file_open_mapped(pid, &m, path);
		if (fd < 0)
			return fd;
		/* a reused pid's map_files could name another file: only the recorded one leaves */
		if (fstat(fd, &st) < 0)
			return negative_errno();
		if (st.st_ino != m.inode || st.st_dev != makedev(m.dev_major, m.dev_minor))
			return -EPERM;
		return TAKE_FD(fd);
	case TARGET_FILE_DEBUGLINK:
		r = collector_recorded_mapping(c, request, &m, &path, &pid);
		if (r < 0)
			return r;
		return target_file_open_remembered(request, &c->file_policy, &root_only, path);
	case TARGET_FILE_BUILD_ID:
	case TARGET_FILE_DEBUG_ALT:
		pthread_mutex_lock(&c->recorded_lock);
		known = process_table_find(c->recorded, request->pid) ||
			tid_set_contains(&c->unrecorded, request->pid);
		pthread_mutex_unlock(&c->recorded_lock);
		if (!known)
			return -ESRCH;
		return target_file_open_remembered(request, &c->file_policy, &root_only, NULL);
	default:
		return -ESRCH;
	}
}

/* A file of one process of a multi-process target, for a consumer that names the process. */
static int collector_open_process_file(Collector *c, const TargetFileRequest *request)
{
	_cleanup_close_ int pidfd = -1, fd = -1;
	int r;

	r = collector_process_begin(c, request->pid, &pidfd);
	if (r >= 0)
		r = fd = target_file_open(request, &c->file_policy);
	if (r >= 0)
		r = collector_process_end(pidfd);
	/* gone (or no longer mapping it): what its records said, if it was in the session */
	if ((r == -ESRCH || r == -ENOENT) && c->recorded)
		return collector_open_recorded_file(c, request);
	return r < 0 ? r : TAKE_FD(fd);
}

int collector_namespace_pid(Collector *c, uint32_t pid, uint32_t *ret)
{
	_cleanup_close_ int pidfd = -1;
	uint32_t ns_pid;
	int r;

	r = collector_process_begin(c, pid, &pidfd);
	if (r < 0)
		return r;
	ns_pid = target_namespace_pid(pid);
	r = collector_process_end(pidfd);
	if (r < 0)
		return r;
	*ret = ns_pid;
	return 0;
}

int collector_open_target_file(Collector *c, const TargetFileRequest *request)
{
	bool kernel_file = request->kind == TARGET_FILE_KALLSYMS ||
			   request->kind == TARGET_FILE_KERNEL_NOTES;

	if (c->target) {
		if (kernel_file)
			return request->pid == 0 ? target_file_open(request, &c->file_policy) : -EPERM;
		return collector_open_process_file(c, request);
	}
	if (!c->file_cache)
		return -EOPNOTSUPP;
	/* only this session's target, whatever the consumer asks (the kernel's own files: pid 0) */
	if (request->pid != (kernel_file ? 0U : (uint32_t)sampling_session_get_pid(c->session)))
		return -EPERM;
	return target_file_cache_open(request, c->file_cache);
}

/* What a consumer elsewhere reports, kept only when it could be true. */
static int collector_take_stats_locked(Collector *c, const ProfileBuilderStats *stats,
				       uint64_t cpu_nanos)
{
	if (stats->samples > c->samples_pushed || stats->unwind_failures > stats->samples ||
	    stats->truncated_stacks > stats->samples)
		return -EBADMSG;
	c->built = *stats;
	c->unwind_cpu_nanos = cpu_nanos;
	return 0;
}

void collector_consumer_throttled(Collector *c, uint64_t nanos)
{
	pthread_mutex_lock(&c->lock);
	c->consumer_throttled_nanos += nanos;
	pthread_mutex_unlock(&c->lock);
}

void collector_consumer_progress(Collector *c, const ProfileBuilderStats *stats, uint64_t cpu_nanos)
{
	pthread_mutex_lock(&c->lock);
	if (c->elsewhere && !c->consumer_done)
		(void)collector_take_stats_locked(c, stats, cpu_nanos);
	pthread_mutex_unlock(&c->lock);
}

/*
 * What a consumer elsewhere says the walks needed, within what it could know:
 * unwind_suggest_stack_bytes() asks for twice the copy at most, never less than
 * UNWIND_STACK_MIN, and the kernel copies whole u64 words up to its limit.
 */
static uint32_t collector_clamp_stack_needed(const Collector *c, uint32_t needed)
{
	uint64_t most = (uint64_t)c->stack_bytes * 2;

	if (needed == 0 || c->stack_bytes == 0)
		return 0;
	if (most > SAMPLING_MAX_STACK_BYTES)
		most = SAMPLING_MAX_STACK_BYTES;
	if (needed < UNWIND_STACK_MIN)
		needed = UNWIND_STACK_MIN;
	if (needed > most)
		needed = (uint32_t)most;
	return (needed + 7) & ~7U; /* SAMPLING_MAX_STACK_BYTES is whole words already */
}

int collector_consumer_quality(Collector *c, const char *wire, size_t size)
{
	StackQuality *q;
	int r;

	pthread_mutex_lock(&c->lock);
	if (!c->elsewhere || c->consumer_done || c->quality)
		r = -EALREADY;
	else
		r = stack_quality_from_wire(wire, size, c->samples_pushed, &q);
	if (r >= 0)
		c->quality = q;
	pthread_mutex_unlock(&c->lock);
	return r;
}

int collector_get_stack_quality(Collector *c, StackQualityFetchFn fetch, void *userdata,
				json_t **ret)
{
	const StackQuality *q;

	if (!collector_is_finished(c))
		return -ENODATA;
	/* finished: nothing changes them any more */
	if (c->elsewhere)
		q = c->quality;
	else if (c->resolver)
		q = stack_resolver_get_quality(c->resolver);
	else
		q = c->resolvers ? process_resolvers_get_quality(c->resolvers) : NULL;
	if (!q)
		return -ENODATA;
	return stack_quality_to_json(q, fetch, userdata, ret);
}

/* What the records told of the target's processes, as records, in a memfd. */
static int collector_state_memfd(Collector *c)
{
	_cleanup_(record_buffer_clear) RecordBuffer records = {};
	int r;

	pthread_mutex_lock(&c->recorded_lock);
	r = target_snapshot_table(c->recorded, &c->format, clock_nanos(CLOCK_MONOTONIC), &records);
	pthread_mutex_unlock(&c->recorded_lock);
	if (r < 0)
		return r;
	return memfd_new_from("profd-state", records.data, records.size,
			      F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
}

int collector_consumer_restart(Collector *c)
{
	_cleanup_close_ int fd = -1;
	bool done;

	if (!c->elsewhere)
		return -EINVAL;
	fd = collector_state_memfd(c);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&c->lock);
	done = c->consumer_done;
	if (!done)
		c->consumer_restarts++;
	pthread_mutex_unlock(&c->lock);
	return done ? -EALREADY : TAKE_FD(fd);
}

int collector_consumer_done(Collector *c, const ProfileBuilderStats *stats, uint64_t cpu_nanos,
			    bool warm, uint32_t stack_bytes_needed, int error)
{
	int r = error;

	pthread_mutex_lock(&c->lock);
	if (!c->elsewhere || c->consumer_done) {
		pthread_mutex_unlock(&c->lock);
		return -EALREADY;
	}
	if (r == 0 && stats)
		r = collector_take_stats_locked(c, stats, cpu_nanos);
	if (r < 0)
		collector_set_error_locked(c, r);
	else if (c->consumer_restarts > 0) /* then a cut-off's are among them */
		c->samples_lost_consumer = c->samples_pushed - c->built.samples;
	else if (c->cut_off)
		c->samples_after_cutoff = c->samples_pushed - c->built.samples;
	c->consumer_warm = r == 0 && warm;
	if (r == 0 && stats)
		c->stack_bytes_needed = collector_clamp_stack_needed(c, stack_bytes_needed);
	c->consumer_done = true;
	collector_maybe_finish_locked(c);
	pthread_mutex_unlock(&c->lock);
	/* a consumer that failed ends the window too: nobody would resolve what comes */
	if (r < 0)
		collector_stop(c);
	return r;
}
