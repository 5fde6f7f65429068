/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sampling-session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "bpf-sampler.h"
#include "cleanup.h"
#include "pause-estimate.h"
#include "perf-event.h"
#include "perf-record.h"
#include "perf-synth.h"
#include "profile-builder.h"
#include "ring.h"
#include "sampling-request.h"
#include "session-loop.h"
#include "target-snapshot.h"
#include "task-list.h"
#include "tid-set.h"
#include "time-util.h"

/*
 * Per-CPU ring: room for this long of sampling at the full rate, so that a
 * collector preempted on a busy machine loses nothing (250 ms lost samples
 * under ASan beside two busy processes), within the bounds below.
 */
#define RING_MILLISECONDS 500
#define RING_MIN_SAMPLES 8
/* a ring's cap: the session's rings together within RINGS_MAX_BYTES, one ring never under the floor */
#define RING_MAX_BYTES (4096U * 1024U)
#define RING_MAX_BYTES_FLOOR (2048U * 1024U)
#define RINGS_MAX_BYTES (16U * 1024U * 1024U)
/*
 * Many processes (a cgroup, the whole machine): a ring holds their side band
 * too, a FORK, COMM, EXIT and an MMAP2 per file for every process started,
 * thousands a second on a machine that runs a build. perf record -a maps
 * 512 KiB per CPU for it.
 */
#define RING_MIN_BYTES_PROCESSES (512U * 1024U)
/* the rings' readiness wakes the caller; every step drains them all anyway */
#define SOURCE_RING SESSION_SOURCE_BACKEND

/* One ring per CPU; every event of that CPU writes into it. */
typedef struct SessionRing {
	int cpu;
	int fd;                   /* the event the ring is mapped from (owned by 'event_fds') */
	PerfRing *ring;
	uint64_t throttled_since; /* CLOCK_MONOTONIC of the last THROTTLE, 0 when not throttled */
	/* while draining: the ring's next record, parsed (NULL when it has none left) */
	const struct perf_event_header *next;
	PerfRecord next_rec;
} SessionRing;

struct SamplingSession {
	pid_t pid;                    /* 0 with a multi-process target */
	const SamplingTarget *target; /* a cgroup or the system; NULL for one process */
	char *target_name;
	const char *backend, *event, *end_reason;
	bool dwarf;

	SamplingRequest request;
	uint32_t requested_stack_bytes;
	uint64_t sample_budget, sample_budget_limit, explicit_sample_budget;
	PerfEventConfig config;
	struct perf_event_attr attr;
	PerfRecordFormat format;
	size_t ring_size;

	int *event_fds;     /* one per thread and CPU */
	size_t n_event_fds, max_events;
	SessionRing *rings; /* one per online CPU */
	size_t n_rings;
	TidSet opened;      /* threads with events of their own */
	uint64_t threads_at_start;
	/* threads of the target now and at most at once, from FORK and EXIT records */
	uint64_t threads_live, threads_peak;

	SessionLoop loop;

	/* where the target's records go: a caller's sink, or our own builder */
	SamplingRecordFn sink;
	void *sink_userdata;
	ProfileBuilder *builder;
	/* what /proc shows once the events are enabled, handed on as records at start */
	ProcessMaps *initial_maps;
	uint64_t initial_time; /* just before the events were enabled: the window's start */
	PerfSynthRecord *initial_names;
	size_t n_initial_names;
	RecordBuffer initial_processes; /* multi-process: their mappings and names at start */
	TidSet seen;

	/* multi-process: which processes the admit rule let in, or kept out */
	ProcessAdmitFn admit;
	void *admit_userdata;
	TidSet admitted, refused, processes_seen;
	uint64_t samples_excluded;

	uint64_t end_mono;
	uint64_t last_sample_time; /* CLOCK_MONOTONIC of the latest sample kept */
	bool budget_reached;

	/* counters reported as metrics */
	uint64_t samples_captured, lost_records, lost_samples, throttle_events, unthrottle_events;
	uint64_t throttled_samples, ring_bytes, backlog_dropped, records_dropped;
};

static int read_u32_file(const char *path, uint32_t *ret)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	unsigned long v;

	if (!f)
		return negative_errno();
	if (fscanf(f, "%lu", &v) != 1)
		return -EIO;
	*ret = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	return 0;
}

int sampling_max_hz(uint32_t *ret)
{
	uint32_t kernel_max;
	int r;

	r = read_u32_file("/proc/sys/kernel/perf_event_max_sample_rate", &kernel_max);
	if (r < 0)
		return r;
	*ret = kernel_max < SAMPLING_HZ_CEILING ? kernel_max : SAMPLING_HZ_CEILING;
	if (*ret == 0)
		*ret = 1;
	return 0;
}

int sampling_backend_check(const char *backend)
{
	if (!backend || strcmp(backend, "auto") == 0 || strcmp(backend, "perf-dwarf") == 0 ||
	    strcmp(backend, "perf-fp") == 0)
		return 0;
	if (strcmp(backend, "bpf") == 0) {
		int r = bpf_sampler_probe();

		return r < 0 ? -EOPNOTSUPP : 0;
	}
	return -EINVAL;
}

int sampling_event_check(const char *event)
{
	PerfEventConfig config = { .event = event, .hz = 1 };
	struct perf_event_attr attr;

	return perf_event_attr_build(&config, &attr);
}

static void session_close_events(SamplingSession *s)
{
	for (size_t i = 0; i < s->n_rings; i++)
		s->rings[i].ring = ring_free(s->rings[i].ring);
	for (size_t i = 0; i < s->n_event_fds; i++)
		safe_close(s->event_fds[i]);
	free(s->event_fds);
	s->event_fds = NULL;
	s->n_event_fds = 0;
}

SamplingSession *sampling_session_free(SamplingSession *s)
{
	if (!s)
		return NULL;
	session_close_events(s);
	free(s->rings);
	tid_set_clear(&s->opened);
	session_loop_close(&s->loop);
	profile_builder_free(s->builder);
	process_maps_free(s->initial_maps);
	free(s->initial_names);
	record_buffer_clear(&s->initial_processes);
	tid_set_clear(&s->seen);
	tid_set_clear(&s->admitted);
	tid_set_clear(&s->refused);
	tid_set_clear(&s->processes_seen);
	free(s->target_name);
	free(s);
	return NULL;
}

static int session_apply_options(SamplingSession *s, const SamplingOptions *o)
{
	int r;

	r = sampling_backend_check(o->backend);
	if (r < 0)
		return r;
	/* the bpf backend samples without rings: bpf-sampler.h (the Collector runs either) */
	if (o->backend && strcmp(o->backend, "bpf") == 0)
		return -EOPNOTSUPP;
	r = sampling_event_check(o->event);
	if (r < 0)
		return r;
	if (o->stack_bytes > SAMPLING_MAX_STACK_BYTES)
		return -EINVAL;
	/* clamp, never refuse; both values are reported, the request as given (0 = default) */
	r = sampling_request_clamp(o, &s->request);
	if (r < 0)
		return r;

	s->dwarf = !o->backend || strcmp(o->backend, "perf-fp") != 0;
	s->backend = s->dwarf ? "perf-dwarf" : "perf-fp";
	s->event = perf_event_name(o->event);

	s->requested_stack_bytes = o->stack_bytes;

	s->explicit_sample_budget = o->sample_budget;
	s->sample_budget_limit = o->sample_budget_limit;
	s->max_events = o->max_events;
	s->sink = o->record_sink;
	s->sink_userdata = o->record_sink_userdata;
	s->admit = o->admit;
	s->admit_userdata = o->admit_userdata;

	s->config = (PerfEventConfig){
		.event = s->event,
		.hz = s->request.hz,
		.dwarf = s->dwarf,
		.exclude_kernel = o->exclude_kernel,
	};
	if (s->dwarf) {
		uint32_t bytes = o->stack_bytes ? o->stack_bytes : SAMPLING_DEFAULT_STACK_BYTES;

		if (o->stack_bytes_copy && o->stack_bytes_copy < bytes)
			bytes = o->stack_bytes_copy;
		/* the kernel copies whole u64 words */
		s->config.stack_bytes = (bytes + 7) & ~7U;
	}
	return 0;
}

static void session_size_rings(SamplingSession *s)
{
	size_t sample = perf_event_max_sample_size(&s->config);
	size_t want = (size_t)s->request.hz * sample * RING_MILLISECONDS / 1000;
	size_t cap = RINGS_MAX_BYTES / (s->n_rings ? s->n_rings : 1);

	cap = cap > RING_MAX_BYTES ? RING_MAX_BYTES : cap < RING_MAX_BYTES_FLOOR ? RING_MAX_BYTES_FLOOR : cap;
	if (want > cap)
		want = cap;
	if (want < RING_MIN_SAMPLES * sample)
		want = RING_MIN_SAMPLES * sample;
	if (s->target && want < RING_MIN_BYTES_PROCESSES)
		want = RING_MIN_BYTES_PROCESSES;
	s->ring_size = ring_data_size_for(want);
	/* wake the collector at an eighth full (~60 ms at 999 Hz with 8 KiB stacks): the rest
	 * absorbs a collector thread that is not scheduled at once */
	s->config.wakeup_bytes = (uint32_t)(s->ring_size / 8);
}

static int session_add_event(SamplingSession *s, int fd)
{
	int *fds;

	if (s->max_events > 0 && s->n_event_fds >= s->max_events)
		return -EMFILE;
	fds = reallocarray(s->event_fds, s->n_event_fds + 1, sizeof(int));

	if (!fds)
		return -ENOMEM;
	s->event_fds = fds;
	s->event_fds[s->n_event_fds++] = fd;
	return 0;
}

/* Map the ring of a CPU from its first event, and watch it. */
static int session_map_ring(SamplingSession *s, SessionRing *ring, int fd)
{
	size_t min = RING_MIN_SAMPLES * perf_event_max_sample_size(&s->config);
	int r;

	/* without CAP_IPC_LOCK the locked-memory limit may refuse big rings; halve down to 8 samples */
	for (size_t size = s->ring_size;; size /= 2) {
		r = ring_map(fd, size, &ring->ring);
		if (r >= 0 || (r != -EPERM && r != -ENOMEM) || size / 2 < min)
			break;
	}
	if (r < 0)
		return r;
	/* edge-triggered: the event of an exited thread stays in POLLHUP forever */
	r = session_timers_watch(&s->loop.timers, fd, SOURCE_RING, EPOLLIN | EPOLLET);
	if (r < 0) {
		ring->ring = ring_free(ring->ring);
		return r;
	}
	ring->fd = fd;
	return 0;
}

/* Open the events of one thread, one per CPU. -ESRCH when it is gone already. */
static int session_open_thread(SamplingSession *s, pid_t tid)
{
	int r;

	/* a thread costs one event per CPU: refuse it whole rather than sample it on some CPUs */
	if (s->max_events > 0 && s->n_event_fds + s->n_rings > s->max_events)
		return -EMFILE;
	for (size_t i = 0; i < s->n_rings; i++) {
		SessionRing *ring = &s->rings[i];
		_cleanup_close_ int fd = -1;

		r = perf_event_open_tid(&s->attr, tid, ring->cpu, &fd);
		if (r < 0)
			return r;
		if (ring->ring)
			r = ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0 ? negative_errno() : 0;
		else
			r = session_map_ring(s, ring, fd);
		if (r < 0)
			return r;
		r = session_add_event(s, fd);
		if (r < 0) {
			if (ring->fd == fd) {
				ring->ring = ring_free(ring->ring);
				ring->fd = -1;
			}
			return r;
		}
		TAKE_FD(fd);
	}
	r = tid_set_add(&s->opened, (uint32_t)tid);
	return r < 0 ? r : 0;
}

static uint64_t session_now(void)
{
	return clock_nanos(CLOCK_MONOTONIC);
}

/* Hand one record of the target on; -ENOBUFS (no room) is counted, not an error. */
static int session_emit(SamplingSession *s, const struct perf_event_header *raw,
			const PerfRecord *rec)
{
	int r;

	if (s->sink)
		r = s->sink(s->sink_userdata, raw, rec);
	else
		r = profile_builder_add(s->builder, rec);
	if (r != -ENOBUFS)
		return r < 0 ? r : 0;
	if (rec->type == PERF_RECORD_SAMPLE)
		s->backlog_dropped++;
	else
		s->records_dropped++;
	return 1;
}

/* Parse what we wrote, so synthesized records take the very path real ones take. */
static int session_emit_synth(SamplingSession *s, const PerfSynthRecord *synth)
{
	PerfRecord rec;
	int r;

	r = perf_record_parse(&s->format, &synth->header, synth->header.size, &rec);
	if (r < 0)
		return r;
	r = session_emit(s, &synth->header, &rec);
	return r < 0 ? r : 0;
}

/* The name of a thread as of 'time', as a COMM record: kept for start() before it, emitted after. */
static int session_name_thread(SamplingSession *s, pid_t tid, uint64_t time)
{
	PerfSynthRecord rec, *names;
	char comm[16];
	int r;

	/* a thread that is gone already keeps no name; the profile does not need one */
	if (task_read_comm(s->pid, tid, comm) < 0)
		return 0;
	r = perf_synth_comm(&s->format, (uint32_t)s->pid, (uint32_t)tid, comm, time, &rec);
	if (r < 0)
		return r;
	if (s->loop.phase != SESSION_PHASE_CREATED)
		return session_emit_synth(s, &rec);
	names = reallocarray(s->initial_names, s->n_initial_names + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	s->initial_names = names;
	/* only the bytes the record uses: names are short */
	memcpy(&s->initial_names[s->n_initial_names++], &rec, rec.header.size);
	return 0;
}

/* What the target looked like at start, as records: mappings first, then thread names. */
static int session_emit_initial(SamplingSession *s)
{
	int r;

	for (size_t i = 0; s->initial_maps && i < s->initial_maps->n_mappings; i++) {
		PerfSynthRecord rec;

		r = perf_synth_mmap2(&s->format, (uint32_t)s->pid, &s->initial_maps->mappings[i],
				     s->initial_time, &rec);
		if (r == -ENAMETOOLONG)
			continue; /* no such path in a real /proc; nothing to name by it */
		if (r >= 0)
			r = session_emit_synth(s, &rec);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < s->n_initial_names; i++) {
		r = session_emit_synth(s, &s->initial_names[i]);
		if (r < 0)
			return r;
	}
	for (size_t at = 0; at < s->initial_processes.size;) {
		const struct perf_event_header *h =
			(const struct perf_event_header *)(s->initial_processes.data + at);
		PerfRecord rec;

		r = perf_record_parse(&s->format, h, h->size, &rec);
		if (r >= 0)
			r = session_emit(s, h, &rec);
		if (r < 0)
			return r;
		at += h->size;
	}
	record_buffer_clear(&s->initial_processes);
	s->initial_maps = process_maps_free(s->initial_maps);
	free(s->initial_names);
	s->initial_names = NULL;
	s->n_initial_names = 0;
	return 0;
}

/*
 * Is 'pid' one of the target's, to be sampled? For a multi-process target the
 * admit rule is asked once per process (again after an exec, which may change
 * its credentials); the answer is kept.
 */
static bool session_admits(SamplingSession *s, uint32_t pid)
{
	if (!s->target)
		return pid == (uint32_t)s->pid;
	if (pid == 0 || sampling_target_excludes(s->target, (pid_t)pid))
		return false;
	if (tid_set_contains(&s->admitted, pid))
		return true;
	if (tid_set_contains(&s->refused, pid))
		return false;
	/* a set that cannot grow just asks again next time */
	if (!s->admit || s->admit(s->admit_userdata, pid)) {
		(void)tid_set_add(&s->admitted, pid);
		return true;
	}
	(void)tid_set_add(&s->refused, pid);
	return false;
}

/* One event per CPU for every task (system) or the tasks of a cgroup, each with its ring. */
static int session_open_cpus(SamplingSession *s)
{
	int cgroup_fd = s->target->kind == SAMPLING_TARGET_CGROUP ? s->target->cgroup_fd : -1;
	struct perf_event_attr attr = s->attr;
	int r;

	/* a CPU's event sees every task there: nothing to inherit */
	attr.inherit = attr.inherit_thread = 0;
	for (size_t i = 0; i < s->n_rings; i++) {
		_cleanup_close_ int fd = -1;

		if (s->max_events > 0 && s->n_event_fds >= s->max_events)
			return -EMFILE;
		r = perf_event_open_cpu(&attr, cgroup_fd, s->rings[i].cpu, &fd);
		if (r >= 0)
			r = session_map_ring(s, &s->rings[i], fd);
		if (r >= 0)
			r = session_add_event(s, fd);
		if (r < 0)
			return r;
		TAKE_FD(fd);
	}
	return 0;
}

/* The target's processes now (those admitted), as records for start() to hand on. */
static int session_snapshot_processes(SamplingSession *s)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n;
	int r;

	r = sampling_target_list_processes(s->target, &pids, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		size_t threads;

		if (!session_admits(s, (uint32_t)pids[i]))
			continue;
		r = target_snapshot_process((uint32_t)pids[i], &s->format, s->initial_time,
					    &s->initial_processes, &threads);
		/* any process may vanish (or change) at any step of the scan: skip it */
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			continue;
		s->threads_at_start += threads;
	}
	return 0;
}

/*
 * Open an event for every thread in /proc/<pid>/task. A thread created while
 * we scan may come from a thread whose event is not open yet, so rescan until
 * nothing new appears; after that, every new thread inherits an event.
 */
static int session_open_threads(SamplingSession *s)
{
	for (int round = 0; round < 8; round++) {
		_cleanup_free_ pid_t *tids = NULL;
		size_t n, added = 0;
		int r;

		r = task_list_read(s->pid, &tids, &n);
		if (r < 0)
			return s->opened.count > 0 ? 0 : r;
		for (size_t i = 0; i < n; i++) {
			if (tid_set_contains(&s->opened, (uint32_t)tids[i]))
				continue;
			r = session_open_thread(s, tids[i]);
			if (r == -ESRCH)
				continue; /* exited meanwhile */
			if (r < 0)
				return r;
			r = session_name_thread(s, tids[i], session_now());
			if (r < 0)
				return r;
			added++;
		}
		if (added == 0)
			break;
	}
	return s->opened.count > 0 ? 0 : -ESRCH;
}

static int session_open_rings(SamplingSession *s)
{
	_cleanup_free_ int *cpus = NULL;
	size_t n;
	int r;

	r = perf_online_cpus(&cpus, &n);
	if (r < 0)
		return r;
	s->rings = calloc(n, sizeof(SessionRing));
	if (!s->rings)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s->rings[i] = (SessionRing){ .cpu = cpus[i], .fd = -1 };
	s->n_rings = n;
	return 0;
}

int sampling_session_new(pid_t pid, const SamplingOptions *options, SamplingSession **ret)
{
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	static const SamplingOptions defaults = {};
	uint64_t cpu_start = clock_nanos(CLOCK_THREAD_CPUTIME_ID);
	int r;

	const SamplingTarget *target = options ? options->target : NULL;

	if (!ret)
		return -EINVAL;
	if (target && !sampling_target_is_multi_process(target))
		pid = target->pid;
	if (target && sampling_target_is_multi_process(target))
		pid = 0;
	else {
		/* a thread id stands for its process: samples carry the process id */
		r = task_get_tgid(pid, &pid);
		if (r < 0)
			return r;
		target = NULL;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	s->target = target;
	s->loop = SESSION_LOOP_NULL;
	s->end_reason = "running";

	r = session_apply_options(s, options ? options : &defaults);
	if (r < 0)
		return r;
	r = session_open_rings(s);
	if (r < 0)
		return r;
	session_size_rings(s);
	r = perf_event_attr_build(&s->config, &s->attr);
	if (r < 0)
		return r;
	s->format = (PerfRecordFormat){
		.sample_type = s->attr.sample_type,
		.sample_regs_user = s->attr.sample_regs_user,
		.sample_id_all = true,
	};

	if (!s->sink) {
		const SamplingOptions *o = options ? options : &defaults;

		r = profile_builder_new((uint32_t)pid, NSEC_PER_SEC / s->request.hz, o->resolve,
					o->resolve_userdata, &s->builder);
		if (r < 0)
			return r;
	}

	if (target)
		r = sampling_target_describe(target, &s->target_name);
	else
		r = asprintf(&s->target_name, "pid:%d", (int)pid) < 0 ? -ENOMEM : 0;
	if (r >= 0 && s->builder)
		r = profile_builder_set_target(s->builder, s->target_name, NULL);
	if (r < 0)
		return r;
	/* many processes: no one of them ends the session */
	r = session_loop_open(&s->loop, s->target ? 0 : s->pid);
	if (r < 0)
		return r;
	if (target) {
		r = session_open_cpus(s);
		if (r < 0)
			return r;
	} else {
		r = session_open_threads(s);
		if (r < 0)
			return r;
		s->threads_at_start = s->opened.count;
	}

	s->loop.cpu_nanos = clock_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	*ret = TAKE_PTR(s);
	return 0;
}

/*
 * The sample budget (README "Configuration and limits"). By default it is what
 * the event can produce in the window: one sample per period for each thread
 * running, and no more threads running at once than there are CPUs, so
 * min(most threads at once, CPUs) x (hz x seconds + 1). It grows as threads
 * appear. An explicit sample_budget stands as given. Both are capped by the
 * caller's limit.
 */
uint64_t sampling_default_budget(uint32_t hz, uint64_t duration_nanos, uint64_t threads,
				 uint64_t cpus)
{
	uint64_t slots = threads < cpus ? threads : cpus;
	unsigned __int128 periods = ((unsigned __int128)hz * duration_nanos + NSEC_PER_SEC - 1) /
				    NSEC_PER_SEC + 1;
	unsigned __int128 c = periods * (slots > 0 ? slots : 1);

	return c > UINT64_MAX ? UINT64_MAX : (uint64_t)c;
}

static void session_update_capacity(SamplingSession *s)
{
	uint64_t capacity = s->explicit_sample_budget;

	if (capacity == 0)
		/* many processes: a sample per CPU and period, however many threads they run */
		capacity = sampling_default_budget(s->request.hz, s->request.duration,
						   s->target ? s->n_rings : s->threads_peak, s->n_rings);
	if (s->sample_budget_limit > 0 && capacity > s->sample_budget_limit)
		capacity = s->sample_budget_limit;
	s->sample_budget = capacity;
}

/* A thread of the target started (+1) or ended (-1). */
static void session_count_thread(SamplingSession *s, int delta)
{
	if (delta < 0) {
		/* records of different CPUs arrive out of order: an EXIT may come before its FORK */
		if (s->threads_live > 0)
			s->threads_live--;
		return;
	}
	s->threads_live++;
	if (s->threads_live > s->threads_peak) {
		s->threads_peak = s->threads_live;
		session_update_capacity(s);
	}
}

/*
 * What the target looks like, read from /proc once the events are enabled: a
 * disabled event records no MMAP2, so whatever is mapped between an earlier
 * read and the enable would be unknown for the whole session. Mappings made
 * after the enable and before the read come twice, as records later in the
 * stream: the same mappings again. A mapping both made and removed in that
 * time stays (nothing records an munmap) until something is mapped over it.
 */
static int session_snapshot(SamplingSession *s)
{
	int r;

	if (s->target)
		return session_snapshot_processes(s);
	r = process_maps_load((uint32_t)s->pid, &s->initial_maps);
	/* gone already: the session ends as the target exited, with what it sampled */
	return r == -ESRCH ? 0 : r;
}

static int session_start(void *userdata)
{
	SamplingSession *s = userdata;
	int r;

	r = session_loop_arm(&s->loop, s->request.duration);
	if (s->builder)
		profile_builder_set_start(s->builder, s->loop.start_mono, s->loop.start_unix);
	if (r < 0)
		return r;
	s->initial_time = session_now();
	for (size_t i = 0; i < s->n_event_fds; i++)
		/* ENABLE reaches the events this one's thread has handed to new threads */
		if (ioctl(s->event_fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return negative_errno();
	r = session_snapshot(s);
	if (r < 0)
		return r;

	s->threads_live = s->threads_peak = s->threads_at_start;
	session_update_capacity(s);
	return session_emit_initial(s);
}

static int session_on_sample(SamplingSession *s, const struct perf_event_header *raw,
			     const PerfRecord *rec)
{
	const PerfSample *sample = &rec->sample;
	int r;

	/* without inherit_thread, forked children inherit events too: not our target */
	if (s->budget_reached)
		return 0;
	if (!session_admits(s, sample->pid)) {
		s->samples_excluded += tid_set_contains(&s->refused, sample->pid);
		return 0;
	}
	if (s->samples_captured >= s->sample_budget) {
		/*
		 * The window ends here, so the profile covers what the metrics claim. Rings
		 * are per CPU and drained one after another, so a sample kept from an
		 * earlier ring may be later than this one: the window reaches it too.
		 */
		s->budget_reached = true;
		s->end_mono = sample->time > s->last_sample_time ? sample->time : s->last_sample_time;
		if (s->end_mono < s->loop.start_mono)
			s->end_mono = s->loop.start_mono;
		return 0;
	}

	r = session_emit(s, raw, rec);
	if (r != 0)
		return r < 0 ? r : 0; /* not kept: counted as dropped */
	if (sample->time > s->last_sample_time)
		s->last_sample_time = sample->time;
	s->samples_captured++;
	r = tid_set_add(&s->seen, sample->tid);
	if (r >= 0 && s->target)
		r = tid_set_add(&s->processes_seen, sample->pid);
	return r < 0 ? r : 0;
}

static void session_on_throttle(SamplingSession *s, SessionRing *e, const PerfRecord *rec)
{
	if (rec->type == PERF_RECORD_THROTTLE) {
		s->throttle_events++;
		e->throttled_since = rec->throttle.time;
		return;
	}
	s->unthrottle_events++;
	/* while throttled the thread offered about one sample per period; count them as dropped */
	if (e->throttled_since > 0 && rec->throttle.time > e->throttled_since)
		s->throttled_samples += (rec->throttle.time - e->throttled_since) /
					(NSEC_PER_SEC / s->request.hz);
	e->throttled_since = 0;
}

static int session_on_record(SamplingSession *s, SessionRing *ring,
			     const struct perf_event_header *header, const PerfRecord *rec)
{
	int r;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		return session_on_sample(s, header, rec);
	case PERF_RECORD_MMAP2:
		if (!session_admits(s, rec->mmap2.pid))
			return 0;
		r = session_emit(s, header, rec);
		return r < 0 ? r : 0;
	case PERF_RECORD_COMM:
		/* an exec may change the credentials: ask about the process again */
		if (s->target && rec->comm.exec && !tid_set_remove(&s->admitted, rec->comm.pid))
			tid_set_remove(&s->refused, rec->comm.pid);
		if (!session_admits(s, rec->comm.pid))
			return 0;
		r = session_emit(s, header, rec);
		return r < 0 ? r : 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* many processes: the consumer follows forks and exits itself (process-table.h) */
		if (s->target) {
			if (!session_admits(s, rec->task.pid))
				return 0;
			r = session_emit(s, header, rec);
			return r < 0 ? r : 0;
		}
		if (rec->task.pid != (uint32_t)s->pid)
			return 0;
		if (rec->type == PERF_RECORD_EXIT) {
			session_count_thread(s, -1);
			return 0;
		}
		/* a new thread: it starts with its creator's comm, /proc has it */
		if (rec->task.tid == rec->task.pid)
			return 0;
		session_count_thread(s, +1);
		return session_name_thread(s, (pid_t)rec->task.tid, rec->task.time);
	case PERF_RECORD_LOST:
		s->lost_records++;
		s->lost_samples += rec->lost.lost;
		return 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		session_on_throttle(s, ring, rec);
		return 0;
	default:
		return 0; /* anything else: nothing to keep */
	}
}

static uint64_t record_time(const PerfRecord *rec)
{
	return rec->type == PERF_RECORD_SAMPLE ? rec->sample.time : rec->id.time;
}

/* Peek and parse the ring's next record into ring->next (NULL: none left). */
static int session_ring_next(SamplingSession *s, SessionRing *ring)
{
	int r;

	ring->next = NULL;
	r = ring_peek(ring->ring, &ring->next);
	if (r <= 0)
		return r;
	r = perf_record_parse(&s->format, ring->next, ring->next->size, &ring->next_rec);
	if (r < 0) {
		ring_consume(ring->ring);
		ring->next = NULL;
	}
	return r;
}

/*
 * Hand on what the rings hold in time order, not ring by ring: a thread's
 * records go to the ring of the CPU it runs on, so the MMAP2 of code mapped
 * on one CPU and the samples taken in that code just after on another sit in
 * different rings, and ring by ring those samples could come first and find
 * nothing mapped there. A drain reads what was written when it began.
 */
static int session_drain(void *userdata)
{
	SamplingSession *s = userdata;
	int r = 0;

	for (size_t i = 0; i < s->n_rings && r >= 0; i++) {
		SessionRing *ring = &s->rings[i];

		ring->next = NULL;
		if (ring->ring && (r = ring_begin(ring->ring)) >= 0)
			r = session_ring_next(s, ring);
	}
	while (r >= 0) {
		SessionRing *first = NULL;

		for (size_t i = 0; i < s->n_rings; i++) {
			SessionRing *ring = &s->rings[i];

			if (ring->next && (!first || record_time(&ring->next_rec) <
							 record_time(&first->next_rec)))
				first = ring;
		}
		if (!first)
			break;
		r = session_on_record(s, first, first->next, &first->next_rec);
		s->ring_bytes += first->next->size;
		ring_consume(first->ring);
		if (r >= 0)
			r = session_ring_next(s, first);
	}
	return r < 0 ? r : 0;
}

static int session_finish(void *userdata, const char *reason)
{
	SamplingSession *s = userdata;
	int r;

	for (size_t i = 0; i < s->n_event_fds; i++)
		(void)ioctl(s->event_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (!s->budget_reached)
		s->end_mono = clock_nanos(CLOCK_MONOTONIC);
	/* what the kernel wrote before the disable still belongs to the window */
	r = session_drain(s);
	if (s->budget_reached)
		reason = "buffer-full";

	s->end_reason = reason;
	if (s->builder)
		profile_builder_set_duration(s->builder, s->end_mono - s->loop.start_mono);
	/* the rings are locked memory: give them back now, not when the caller frees us */
	session_close_events(s);
	return r;
}

static bool session_budget_reached(void *userdata)
{
	const SamplingSession *s = userdata;

	return s->budget_reached;
}

static const SessionLoopOps session_loop_ops = {
	.start = session_start,
	.drain = session_drain,
	.budget_reached = session_budget_reached,
	.finish = session_finish,
};

SESSION_LOOP_DEFINE_CALLS(SamplingSession, sampling_session, session_loop_ops)

const Profile *sampling_session_get_profile(const SamplingSession *s)
{
	return s && s->builder ? profile_builder_get_profile(s->builder) : NULL;
}

Profile *sampling_session_steal_profile(SamplingSession *s)
{
	if (!s || s->loop.phase != SESSION_PHASE_FINISHED || !s->builder)
		return NULL;
	return profile_builder_steal_profile(s->builder);
}

const ProcessMaps *sampling_session_get_maps(const SamplingSession *s)
{
	return s && s->builder ? profile_builder_get_maps(s->builder) : NULL;
}

pid_t sampling_session_get_pid(const SamplingSession *s)
{
	return s->pid;
}

uint64_t sampling_session_get_start(const SamplingSession *s)
{
	return s->loop.start_mono;
}

const PerfRecordFormat *sampling_session_get_format(const SamplingSession *s)
{
	return &s->format;
}

uint64_t sampling_session_max_bytes_per_second(const SamplingSession *s)
{
	return (uint64_t)s->request.hz * s->n_rings * perf_event_max_sample_size(&s->config);
}

void sampling_session_get_metrics(const SamplingSession *s, SamplingMetrics *ret)
{
	ProfileBuilderStats stats = {};
	uint64_t end;

	if (s->loop.phase == SESSION_PHASE_FINISHED)
		end = s->end_mono;
	else if (s->loop.phase == SESSION_PHASE_SAMPLING)
		end = clock_nanos(CLOCK_MONOTONIC);
	else
		end = s->loop.start_mono;

	if (s->builder)
		profile_builder_get_stats(s->builder, &stats);
	*ret = (SamplingMetrics){
		.samples_captured = s->samples_captured,
		.samples_dropped = s->lost_samples + s->throttled_samples + s->backlog_dropped,
		.threads_seen = s->seen.count,
		.threads_at_start = s->threads_at_start,
		.threads_peak = s->threads_peak,
		.duration_nanos = end - s->loop.start_mono,
		.buffer_full = s->budget_reached,
		.start_unix_nanos = s->loop.start_unix,
		.start_mono_nanos = s->loop.start_mono,
		.backend = s->backend,
		.event = s->event,
		.end_reason = s->end_reason,
		.requested_stack_bytes = s->requested_stack_bytes,
		.stack_bytes = s->config.stack_bytes,
		.sample_budget = s->sample_budget,
		.ring_bytes = s->ring_bytes,
		.collector_cpu_nanos = s->loop.cpu_nanos,
		.unwind_failures = stats.unwind_failures,
		.truncated_stacks = stats.truncated_stacks,
		.backlog_dropped = s->backlog_dropped,
		.records_dropped = s->records_dropped,
		.lost_records = s->lost_records,
		.lost_samples = s->lost_samples,
		.throttle_events = s->throttle_events,
		.unthrottle_events = s->unthrottle_events,
		.throttled_samples = s->throttled_samples,
		.target = s->target_name,
		.untimed = false,
		.processes_seen = s->processes_seen.count,
		.processes_excluded = s->refused.count,
		.samples_excluded = s->samples_excluded,
	};
	sampling_request_to_metrics(&s->request, ret);
	pause_estimate(&s->config, ret);
}
