/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sampling-session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "default-resolver.h"
#include "pause-estimate.h"
#include "perf-event.h"
#include "perf-record.h"
#include "ring.h"
#include "task-list.h"
#include "tid-set.h"

#define NSEC_PER_SEC 1000000000ULL
/* Drain at least this often, so live metrics stay current while rings fill slowly. */
#define TICK_NANOS (250ULL * 1000000ULL)
/* Per-CPU ring: room for this long of sampling at full rate, within the bounds below. */
#define RING_MILLISECONDS 100
#define RING_MIN_SAMPLES 8
#define RING_MAX_BYTES (1024U * 1024U)

/* What an epoll event is about (epoll_event.data.u32). */
typedef enum SessionSource {
	SOURCE_RING,
	SOURCE_STOP,
	SOURCE_DEADLINE,
	SOURCE_TICK,
	SOURCE_PID,
} SessionSource;

typedef enum SessionState {
	SESSION_CREATED,
	SESSION_SAMPLING,
	SESSION_FINISHED,
} SessionState;

/* One ring per CPU; every event of that CPU writes into it. */
typedef struct SessionRing {
	int cpu;
	int fd;                   /* the event the ring is mapped from (owned by 'event_fds') */
	PerfRing *ring;
	uint64_t throttled_since; /* CLOCK_MONOTONIC of the last THROTTLE, 0 when not throttled */
} SessionRing;

struct SamplingSession {
	pid_t pid;
	SessionState state;
	const char *backend, *event, *end_reason;
	bool dwarf;

	uint32_t hz, requested_hz;
	uint64_t duration, requested_duration;
	bool clamped;
	uint64_t ring_capacity, ring_capacity_limit, explicit_ring_capacity;
	PerfEventConfig config;
	struct perf_event_attr attr;
	PerfRecordFormat format;
	size_t ring_size;

	int *event_fds;     /* one per thread and CPU */
	size_t n_event_fds;
	SessionRing *rings; /* one per online CPU */
	size_t n_rings;
	TidSet opened;      /* threads with events of their own */
	uint64_t threads_at_start;

	int epoll_fd, stop_fd, pid_fd, deadline_fd, tick_fd;

	Profile *profile;
	ProcessMaps *maps;
	FrameCache *cache;
	SampleResolveFn resolve;
	void *resolve_userdata;
	TidSet seen;

	uint64_t start_mono, start_unix, end_mono, deadline;
	uint64_t last_sample_time; /* CLOCK_MONOTONIC of the latest sample kept */
	bool budget_reached;
	int error;

	/* counters reported as metrics */
	uint64_t samples_captured, lost_records, lost_samples, throttle_events, unthrottle_events;
	uint64_t throttled_samples, unwind_failures, truncated_stacks, ring_bytes;
	uint64_t collector_cpu_nanos;
};

static uint64_t now_nanos(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

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
	if (strcmp(backend, "bpf") == 0)
		return -EOPNOTSUPP;
	return -EINVAL;
}

int sampling_event_check(const char *event)
{
	PerfEventConfig config = { .event = event, .hz = 1 };
	struct perf_event_attr attr;

	return perf_event_attr_build(&config, &attr);
}

/* Static names for the metrics: the option strings belong to the caller. */
static const char *event_name(const char *event)
{
	static const char *const names[] = { "cpu-clock", "task-clock", "cycles" };

	for (size_t i = 0; event && i < ELEMENTSOF(names); i++)
		if (strcmp(event, names[i]) == 0)
			return names[i];
	return names[0];
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
	safe_close(s->epoll_fd);
	safe_close(s->stop_fd);
	safe_close(s->pid_fd);
	safe_close(s->deadline_fd);
	safe_close(s->tick_fd);
	profile_free(s->profile);
	process_maps_free(s->maps);
	frame_cache_free(s->cache);
	tid_set_clear(&s->seen);
	free(s);
	return NULL;
}

void sampling_session_freep(SamplingSession **s)
{
	sampling_session_free(*s);
}

static int session_apply_options(SamplingSession *s, const SamplingOptions *o)
{
	uint64_t max_duration = o->max_duration_nanos ? o->max_duration_nanos
						      : SAMPLING_DEFAULT_MAX_DURATION_NANOS;
	uint32_t max_hz;
	int r;

	r = sampling_backend_check(o->backend);
	if (r < 0)
		return r;
	r = sampling_event_check(o->event);
	if (r < 0)
		return r;
	if (o->stack_bytes > SAMPLING_MAX_STACK_BYTES)
		return -EINVAL;
	r = sampling_max_hz(&max_hz);
	if (r < 0)
		return r;

	s->dwarf = !o->backend || strcmp(o->backend, "perf-fp") != 0;
	s->backend = s->dwarf ? "perf-dwarf" : "perf-fp";
	s->event = event_name(o->event);

	/* clamp, never refuse; both values are reported */
	s->requested_hz = o->hz ? o->hz : SAMPLING_DEFAULT_HZ;
	s->hz = s->requested_hz > max_hz ? max_hz : s->requested_hz;
	s->requested_duration = o->duration_nanos ? o->duration_nanos : SAMPLING_DEFAULT_DURATION_NANOS;
	s->duration = s->requested_duration > max_duration ? max_duration : s->requested_duration;
	s->clamped = s->hz != s->requested_hz || s->duration != s->requested_duration;

	s->explicit_ring_capacity = o->ring_capacity;
	s->ring_capacity_limit = o->ring_capacity_limit;
	s->resolve = o->resolve;
	s->resolve_userdata = o->resolve_userdata;

	s->config = (PerfEventConfig){
		.event = s->event,
		.hz = s->hz,
		.dwarf = s->dwarf,
		.exclude_kernel = o->exclude_kernel,
	};
	if (s->dwarf) {
		uint32_t bytes = o->stack_bytes ? o->stack_bytes : SAMPLING_DEFAULT_STACK_BYTES;

		/* the kernel copies whole u64 words */
		s->config.stack_bytes = (bytes + 7) & ~7U;
	}
	return 0;
}

static void session_size_rings(SamplingSession *s)
{
	size_t sample = perf_event_max_sample_size(&s->config);
	size_t want = (size_t)s->hz * sample * RING_MILLISECONDS / 1000;

	if (want > RING_MAX_BYTES)
		want = RING_MAX_BYTES;
	if (want < RING_MIN_SAMPLES * sample)
		want = RING_MIN_SAMPLES * sample;
	s->ring_size = ring_data_size_for(want);
	/* wake the collector at half full: fewer wakeups, and half a ring of headroom */
	s->config.wakeup_bytes = (uint32_t)(s->ring_size / 2);
}

static int session_add_event(SamplingSession *s, int fd)
{
	int *fds = reallocarray(s->event_fds, s->n_event_fds + 1, sizeof(int));

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
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd,
		      &(struct epoll_event){ .events = EPOLLIN | EPOLLET,
					     .data.u32 = SOURCE_RING }) < 0) {
		r = negative_errno();
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

static void session_name_thread(SamplingSession *s, pid_t tid)
{
	char comm[16];

	/* a thread that is gone already keeps no name; the profile does not need one */
	if (task_read_comm(s->pid, tid, comm) >= 0)
		(void)profile_set_thread(s->profile, (uint32_t)tid, comm);
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
			session_name_thread(s, tids[i]);
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

static int session_add_fd(SamplingSession *s, int fd, SessionSource source)
{
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.u32 = source }) < 0)
		return negative_errno();
	return 0;
}

static int session_open_fds(SamplingSession *s)
{
	int r;

	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epoll_fd < 0)
		return negative_errno();
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0)
		return negative_errno();
	s->deadline_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->deadline_fd < 0)
		return negative_errno();
	s->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->tick_fd < 0)
		return negative_errno();
	/* the target's exit, even when it is not our child */
	s->pid_fd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (s->pid_fd < 0)
		return errno == ESRCH ? -ESRCH : negative_errno();

	r = session_add_fd(s, s->stop_fd, SOURCE_STOP);
	if (r >= 0)
		r = session_add_fd(s, s->deadline_fd, SOURCE_DEADLINE);
	if (r >= 0)
		r = session_add_fd(s, s->tick_fd, SOURCE_TICK);
	if (r >= 0)
		r = session_add_fd(s, s->pid_fd, SOURCE_PID);
	return r;
}

int sampling_session_new(pid_t pid, const SamplingOptions *options, SamplingSession **ret)
{
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	static const SamplingOptions defaults = {};
	uint64_t cpu_start = now_nanos(CLOCK_THREAD_CPUTIME_ID);
	int r;

	if (!ret)
		return -EINVAL;
	/* a thread id stands for its process: samples carry the process id */
	r = task_get_tgid(pid, &pid);
	if (r < 0)
		return r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	s->epoll_fd = s->stop_fd = s->pid_fd = s->deadline_fd = s->tick_fd = -1;
	s->end_reason = "running";
	s->deadline = UINT64_MAX;

	r = session_apply_options(s, options ? options : &defaults);
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

	r = profile_new(&s->profile);
	if (r < 0)
		return r;
	s->profile->pid = (uint32_t)pid;
	s->profile->period_nanos = NSEC_PER_SEC / s->hz;
	if (!s->resolve) {
		r = frame_cache_new(&s->cache);
		if (r < 0)
			return r;
		s->resolve = default_resolve_sample;
		s->resolve_userdata = s->cache;
	}

	r = session_open_fds(s);
	if (r < 0)
		return r;
	r = process_maps_load((uint32_t)pid, &s->maps);
	if (r < 0)
		return r;
	r = session_open_rings(s);
	if (r < 0)
		return r;
	r = session_open_threads(s);
	if (r < 0)
		return r;
	s->threads_at_start = s->opened.count;

	s->collector_cpu_nanos = now_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	*ret = TAKE_PTR(s);
	return 0;
}

static int timer_arm(int fd, uint64_t first_nanos, uint64_t interval_nanos, int flags)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(first_nanos / NSEC_PER_SEC),
			      .tv_nsec = (long)(first_nanos % NSEC_PER_SEC) },
		.it_interval = { .tv_sec = (time_t)(interval_nanos / NSEC_PER_SEC),
				 .tv_nsec = (long)(interval_nanos % NSEC_PER_SEC) },
	};

	if (timerfd_settime(fd, flags, &its, NULL) < 0)
		return negative_errno();
	return 0;
}

static uint64_t session_default_capacity(const SamplingSession *s)
{
	/* the seed's budget: hz x seconds x threads, one sample per thread per tick */
	uint64_t per_thread = (uint64_t)((double)s->hz * (double)s->duration / (double)NSEC_PER_SEC);

	if (per_thread == 0)
		per_thread = 1;
	return per_thread * (s->threads_at_start ? s->threads_at_start : 1);
}

int sampling_session_start(SamplingSession *s)
{
	uint64_t cpu_start = now_nanos(CLOCK_THREAD_CPUTIME_ID);
	int r;

	if (!s)
		return -EINVAL;
	if (s->state != SESSION_CREATED)
		return -EALREADY;

	s->ring_capacity = s->explicit_ring_capacity ? s->explicit_ring_capacity
						     : session_default_capacity(s);
	if (s->ring_capacity_limit > 0 && s->ring_capacity > s->ring_capacity_limit)
		s->ring_capacity = s->ring_capacity_limit;

	s->start_unix = now_nanos(CLOCK_REALTIME);
	s->start_mono = now_nanos(CLOCK_MONOTONIC);
	s->deadline = s->start_mono + s->duration;
	s->profile->start_unix_nanos = s->start_unix;

	r = timer_arm(s->deadline_fd, s->deadline, 0, TFD_TIMER_ABSTIME);
	if (r >= 0)
		r = timer_arm(s->tick_fd, TICK_NANOS, TICK_NANOS, 0);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n_event_fds; i++)
		/* ENABLE reaches the events this one's thread has handed to new threads */
		if (ioctl(s->event_fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return negative_errno();
	s->state = SESSION_SAMPLING;
	s->collector_cpu_nanos += now_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	return 0;
}

void sampling_session_stop(SamplingSession *s)
{
	uint64_t one = 1;

	/* only write(): callable from signal handlers and other threads */
	if (s && s->stop_fd >= 0)
		(void)!write(s->stop_fd, &one, sizeof(one));
}

int sampling_session_get_fd(const SamplingSession *s)
{
	return s ? s->epoll_fd : -EINVAL;
}

uint64_t sampling_session_get_deadline(const SamplingSession *s)
{
	return s && s->state == SESSION_SAMPLING ? s->deadline : UINT64_MAX;
}

bool sampling_session_is_finished(const SamplingSession *s)
{
	return s && s->state == SESSION_FINISHED;
}

static int session_on_sample(SamplingSession *s, const PerfSample *sample)
{
	SampleStack stack = { .stack = PROFILE_NONE };
	uint64_t t;
	int r;

	/* without inherit_thread, forked children inherit events too: not our target */
	if (sample->pid != (uint32_t)s->pid || s->budget_reached)
		return 0;
	if (s->samples_captured >= s->ring_capacity) {
		/*
		 * The window ends here, so the profile covers what the metrics claim. Rings
		 * are per CPU and drained one after another, so a sample kept from an
		 * earlier ring may be later than this one: the window reaches it too.
		 */
		s->budget_reached = true;
		s->end_mono = sample->time > s->last_sample_time ? sample->time : s->last_sample_time;
		if (s->end_mono < s->start_mono)
			s->end_mono = s->start_mono;
		return 0;
	}

	r = s->resolve(s->resolve_userdata, sample, s->maps, s->profile, &stack);
	if (r < 0) {
		stack = (SampleStack){ .stack = PROFILE_NONE, .unwind_failed = true };
		if (r == -ENOMEM)
			return r;
	}
	s->unwind_failures += stack.unwind_failed;
	s->truncated_stacks += stack.truncated;

	t = sample->time > s->start_mono ? sample->time - s->start_mono : 0;
	if (sample->time > s->last_sample_time)
		s->last_sample_time = sample->time;
	r = profile_add_sample(s->profile, sample->tid, t, stack.stack);
	if (r < 0)
		return r;
	s->samples_captured++;
	r = tid_set_add(&s->seen, sample->tid);
	return r < 0 ? r : 0;
}

static int session_on_mmap2(SamplingSession *s, const PerfRecordMmap2 *m)
{
	ProcessMapping mapping = {
		.start = m->addr,
		.end = m->addr + m->len,
		.pgoff = m->pgoff,
		.inode = m->ino,
		.dev_major = m->maj,
		.dev_minor = m->min,
		.prot = m->prot,
		.path = (char *)m->filename,
	};

	if (m->pid != (uint32_t)s->pid || m->len == 0 || mapping.end < mapping.start)
		return 0;
	if (mapping.path && mapping.path[0] == '\0')
		mapping.path = NULL;
	return process_maps_add(s->maps, &mapping);
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
					s->profile->period_nanos;
	e->throttled_since = 0;
}

typedef struct DrainContext {
	SamplingSession *session;
	SessionRing *ring;
} DrainContext;

static int session_on_record(void *userdata, const struct perf_event_header *header, size_t size)
{
	DrainContext *ctx = userdata;
	SamplingSession *s = ctx->session;
	PerfRecord rec;
	int r;

	r = perf_record_parse(&s->format, header, size, &rec);
	if (r < 0)
		return r;

	switch (rec.type) {
	case PERF_RECORD_SAMPLE:
		return session_on_sample(s, &rec.sample);
	case PERF_RECORD_MMAP2:
		return session_on_mmap2(s, &rec.mmap2);
	case PERF_RECORD_COMM:
		if (rec.comm.pid != (uint32_t)s->pid)
			return 0;
		/* exec replaced the address space; its new mappings follow as MMAP2 records */
		if (rec.comm.exec)
			process_maps_reset(s->maps);
		return profile_set_thread(s->profile, rec.comm.tid, rec.comm.comm);
	case PERF_RECORD_FORK:
		/* a new thread: it starts with its creator's comm, /proc has it */
		if (rec.task.pid == (uint32_t)s->pid && rec.task.tid != rec.task.pid)
			session_name_thread(s, (pid_t)rec.task.tid);
		return 0;
	case PERF_RECORD_LOST:
		s->lost_records++;
		s->lost_samples += rec.lost.lost;
		return 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		session_on_throttle(s, ctx->ring, &rec);
		return 0;
	default:
		return 0; /* EXIT and anything else: nothing to keep */
	}
}

static int session_drain(SamplingSession *s)
{
	for (size_t i = 0; i < s->n_rings; i++) {
		DrainContext ctx = { .session = s, .ring = &s->rings[i] };
		uint64_t bytes = 0;
		int r;

		if (!s->rings[i].ring)
			continue;
		r = ring_drain(s->rings[i].ring, session_on_record, &ctx, &bytes);
		s->ring_bytes += bytes;
		if (r < 0)
			return r;
	}
	return 0;
}

static void fd_consume(int fd)
{
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
}

static int session_finish(SamplingSession *s, const char *reason)
{
	int r;

	for (size_t i = 0; i < s->n_event_fds; i++)
		(void)ioctl(s->event_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (!s->budget_reached)
		s->end_mono = now_nanos(CLOCK_MONOTONIC);
	/* what the kernel wrote before the disable still belongs to the window */
	r = session_drain(s);
	if (s->budget_reached)
		reason = "buffer-full";

	s->end_reason = reason;
	s->state = SESSION_FINISHED;
	s->profile->duration_nanos = s->end_mono - s->start_mono;
	(void)timer_arm(s->tick_fd, 0, 0, 0);
	(void)timer_arm(s->deadline_fd, 0, 0, 0);
	fd_consume(s->stop_fd);
	/* an exited target's pidfd stays readable: it must not keep waking the caller's loop */
	s->pid_fd = safe_close(s->pid_fd);
	/* the rings are locked memory: give them back now, not when the caller frees us */
	session_close_events(s);
	return r;
}

/* Which of the session's own fds are ready, in one syscall; rings are drained regardless. */
static unsigned session_ready_sources(SamplingSession *s)
{
	struct epoll_event ev[16];
	unsigned ready = 0;
	int n;

	n = epoll_wait(s->epoll_fd, ev, ELEMENTSOF(ev), 0);
	for (int i = 0; i < n; i++)
		ready |= 1U << ev[i].data.u32;
	return ready;
}

static int session_step(SamplingSession *s)
{
	unsigned ready;
	int r;

	if (s->state == SESSION_FINISHED)
		return s->error < 0 ? s->error : 0;
	if (s->state != SESSION_SAMPLING)
		return -ENOTCONN;

	ready = session_ready_sources(s);
	if (ready & (1U << SOURCE_TICK))
		fd_consume(s->tick_fd);
	r = session_drain(s);
	if (r < 0)
		return r;

	if (s->budget_reached)
		r = session_finish(s, "buffer-full");
	else if (ready & (1U << SOURCE_STOP))
		r = session_finish(s, "stopped");
	else if (ready & (1U << SOURCE_PID))
		r = session_finish(s, "target-exited");
	else if ((ready & (1U << SOURCE_DEADLINE)) || now_nanos(CLOCK_MONOTONIC) >= s->deadline)
		r = session_finish(s, "duration");
	else
		return 1;
	return r < 0 ? r : 0;
}

/* One step; a failure ends the session ("failed"), and later steps report it again. */
static int session_step_or_fail(SamplingSession *s)
{
	int r = session_step(s);

	if (r < 0) {
		s->error = r;
		/* a failed session stops sampling; its partial profile stays readable */
		if (s->state != SESSION_FINISHED)
			(void)session_finish(s, "failed");
	}
	return r;
}

int sampling_session_process(SamplingSession *s)
{
	uint64_t cpu_start = now_nanos(CLOCK_THREAD_CPUTIME_ID);
	int r;

	if (!s)
		return -EINVAL;
	r = session_step_or_fail(s);
	s->collector_cpu_nanos += now_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	return r;
}

int sampling_session_run(SamplingSession *s)
{
	uint64_t cpu_start;
	int r;

	if (!s)
		return -EINVAL;
	if (s->state == SESSION_CREATED) {
		r = sampling_session_start(s);
		if (r < 0)
			return r;
	}
	/* one CPU-time reading for the whole loop, its epoll_wait() calls included */
	cpu_start = now_nanos(CLOCK_THREAD_CPUTIME_ID);
	while ((r = session_step_or_fail(s)) > 0) {
		struct epoll_event ev[8];

		if (epoll_wait(s->epoll_fd, ev, ELEMENTSOF(ev), -1) < 0 && errno != EINTR) {
			r = s->error = negative_errno();
			(void)session_finish(s, "failed");
			break;
		}
	}
	s->collector_cpu_nanos += now_nanos(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	return r;
}

const Profile *sampling_session_get_profile(const SamplingSession *s)
{
	return s ? s->profile : NULL;
}

Profile *sampling_session_steal_profile(SamplingSession *s)
{
	if (!s || s->state != SESSION_FINISHED)
		return NULL;
	return TAKE_PTR(s->profile);
}

const ProcessMaps *sampling_session_get_maps(const SamplingSession *s)
{
	return s ? s->maps : NULL;
}

void sampling_session_get_metrics(const SamplingSession *s, SamplingMetrics *ret)
{
	uint64_t end;

	if (s->state == SESSION_FINISHED)
		end = s->end_mono;
	else if (s->state == SESSION_SAMPLING)
		end = now_nanos(CLOCK_MONOTONIC);
	else
		end = s->start_mono;

	*ret = (SamplingMetrics){
		.samples_captured = s->samples_captured,
		.samples_dropped = s->lost_samples + s->throttled_samples,
		.threads_seen = s->seen.count,
		.threads_at_start = s->threads_at_start,
		.duration_nanos = end - s->start_mono,
		.hz = s->hz,
		.clamped = s->clamped,
		.buffer_full = s->budget_reached,
		.requested_hz = s->requested_hz,
		.requested_duration_nanos = s->requested_duration,
		.effective_duration_nanos = s->duration,
		.period_nanos = NSEC_PER_SEC / s->hz,
		.start_unix_nanos = s->start_unix,
		.backend = s->backend,
		.event = s->event,
		.end_reason = s->end_reason,
		.stack_bytes = s->config.stack_bytes,
		.ring_capacity = s->ring_capacity,
		.ring_bytes = s->ring_bytes,
		.collector_cpu_nanos = s->collector_cpu_nanos,
		.unwind_failures = s->unwind_failures,
		.truncated_stacks = s->truncated_stacks,
		.lost_records = s->lost_records,
		.lost_samples = s->lost_samples,
		.throttle_events = s->throttle_events,
		.unthrottle_events = s->unthrottle_events,
		.throttled_samples = s->throttled_samples,
	};
	pause_estimate(&s->config, ret);
}
