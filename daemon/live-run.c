/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "live-run.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bus-errors.h"
#include "caller-text.h"
#include "cleanup.h"
#include "log.h"
#include "session.h"
#include "time-util.h"

/* How often the ring is read while the program runs: well before a busy thread fills its slot. */
#define DRAIN_INTERVAL_USEC (100 * 1000)
/*
 * Records one drain on the loop copies at most (1.5 MiB, about a millisecond):
 * 640,000 spans a second, more than MaxRunSpans' default keeps in two seconds.
 */
#define DRAIN_RECORDS 65536

/* Whether 'pid' lives in another namespace of kind 'ns' ("pid", "time") than profd. */
static bool other_namespace(pid_t pid, const char *ns)
{
	char path[64];
	struct stat mine, theirs;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	if (stat(path, &mine) < 0)
		return false; /* no such namespaces here: everyone shares profd's */
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	if (stat(path, &theirs) < 0)
		return false;
	return mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev;
}

/*
 * How far the program's CLOCK_MONOTONIC is ahead of profd's: its time
 * namespace's offset (0 in profd's). Samples carry profd's clock.
 */
static int64_t monotonic_offset(pid_t pid)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64], name[32];
	long long sec, nsec;

	if (!other_namespace(pid, "time"))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", (int)pid);
	f = fopen(path, "re");
	while (f && fscanf(f, "%31s %lld %lld", name, &sec, &nsec) == 3)
		if (strcmp(name, "monotonic") == 0)
			return -(int64_t)(sec * 1000000000LL + nsec);
	return 0;
}

/* Threads of a program in another pid namespace read at most: a bound on one reading's work on the loop. */
#define NS_TIDS_MAX 4096
/* How often they are read again at most, when a slot names a thread not seen yet. */
#define NS_TIDS_INTERVAL_NSEC 1000000000ULL

/* The innermost id (the last of "NSpid:") of task 'dir'/'name', 0 when it has none. */
static uint32_t task_ns_tid(const char *dir, const char *name)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	char path[PATH_MAX];
	size_t size = 0;

	snprintf(path, sizeof(path), "%s/%s/status", dir, name);
	f = fopen(path, "re");
	while (f && getline(&line, &size, f) >= 0) {
		const char *last;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		last = strrchr(line, '\t');
		return last ? (uint32_t)strtoul(last + 1, NULL, 10) : 0;
	}
	return 0;
}

/* The program's threads: (id in its namespace, profd's id), at most NS_TIDS_MAX of them. */
static int read_ns_tids(LiveRun *l)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	char dir[64];

	if (!l->ns_tids) {
		l->ns_tids = calloc(NS_TIDS_MAX, sizeof(*l->ns_tids));
		if (!l->ns_tids)
			return -ENOMEM;
	}
	l->n_ns_tids = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)l->session->pid);
	d = opendir(dir);
	while (d && l->n_ns_tids < NS_TIDS_MAX && (de = readdir(d))) {
		uint32_t ns_tid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		ns_tid = task_ns_tid(dir, de->d_name);
		if (ns_tid == 0)
			continue;
		l->ns_tids[l->n_ns_tids][0] = ns_tid;
		l->ns_tids[l->n_ns_tids++][1] = (uint32_t)strtoul(de->d_name, NULL, 10);
	}
	return 0;
}

/*
 * SpanTidMapFn of a program in another pid namespace: its tid -> profd's, by
 * NSpid. The threads are read again for a tid not seen, at most once a
 * second (a program naming made-up threads must not keep profd reading
 * /proc); until then the slot waits, and a tid still unknown after a fresh
 * reading is not the program's.
 */
static uint32_t map_namespace_tid(void *userdata, uint32_t tid)
{
	LiveRun *l = userdata;
	uint64_t now = clock_nanos(CLOCK_MONOTONIC);

	for (size_t i = 0; i < l->n_ns_tids; i++)
		if (l->ns_tids[i][0] == tid)
			return l->ns_tids[i][1];
	if (l->ns_tids_read_nsec && now - l->ns_tids_read_nsec < NS_TIDS_INTERVAL_NSEC)
		return SPAN_TID_LATER;
	l->ns_tids_read_nsec = now;
	if (read_ns_tids(l) < 0)
		return SPAN_TID_LATER;
	for (size_t i = 0; i < l->n_ns_tids; i++)
		if (l->ns_tids[i][0] == tid)
			return l->ns_tids[i][1];
	return 0;
}

static int on_drain_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	LiveRun *l = userdata;
	int r;

	r = span_ring_reader_drain(l->reader, clock_nanos(CLOCK_MONOTONIC));
	if (r < 0)
		log_warning("live run %s: cannot read its span ring: %s", l->run_id, strerror(-r));
	(void)sd_event_source_set_time_relative(source, DRAIN_INTERVAL_USEC);
	(void)sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
	return 0;
}

int live_run_new(Session *s, const LiveRunOptions *o, int *ret_memfd, LiveRun **ret)
{
	_cleanup_close_ int memfd = -1;
	const char *build_id;
	TargetInfo target;
	LiveRun *l;
	SpanRingReaderOptions ro = {
		.geometry = o->geometry,
		.max_spans = o->max_spans,
		.drain_records = DRAIN_RECORDS,
		.clock_offset_ns = monotonic_offset(s->pid),
	};
	int r;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->session = s;
	l->run_id = strdup(o->run_id);
	if (!l->run_id) {
		live_run_free(l);
		return -ENOMEM;
	}
	if (other_namespace(s->pid, "pid")) {
		ro.map_tid = map_namespace_tid;
		ro.userdata = l;
	}
	if (target_info_read(s->pid, &target) == 0)
		snprintf(l->comm, sizeof(l->comm), "%s", target.comm);
	/* the session's record read the executable's build-id already ("none" without one) */
	build_id = run_recorder_identity(s->recorder)->detector_digest;
	if (build_id && strcmp(build_id, "none") != 0 && !(l->build_id = strdup(build_id))) {
		live_run_free(l);
		return -ENOMEM;
	}
	r = span_ring_reader_new(&ro, &memfd, &l->reader);
	if (r >= 0)
		r = sd_event_add_time_relative(s->manager->event, &l->drain_timer, CLOCK_MONOTONIC,
					       DRAIN_INTERVAL_USEC, 10 * 1000, on_drain_timer, l);
	if (r < 0) {
		live_run_free(l);
		return r;
	}
	*ret_memfd = TAKE_FD(memfd);
	*ret = l;
	return 0;
}

LiveRun *live_run_free(LiveRun *l)
{
	if (!l)
		return NULL;
	manager_call_fail(&l->finish_call, SD_BUS_ERROR_FAILED, "the live run's session went away");
	sd_event_source_disable_unref(l->drain_timer);
	span_ring_reader_free(l->reader);
	free(l->ns_tids);
	run_profile_free(l->program_record);
	free(l->build_id);
	free(l->run_id);
	free(l);
	return NULL;
}

void live_run_finish(LiveRun *l, RunProfile *record, ManagerCall call)
{
	l->program_record = record;
	l->finish_call = call;
	l->finishing = true;
	session_stop(l->session);
}

/* Why sampling ended, in a live run's words. */
static const char *end_reason(const LiveRun *l, const SamplingMetrics *m)
{
	if (l->finishing)
		return "finished";
	if (m->end_reason && strcmp(m->end_reason, "duration") == 0)
		return "deadline";
	return m->end_reason ?: "unknown";
}

int live_run_hand_over(LiveRun *l, const SamplingMetrics *m, LiveFinish **ret)
{
	_cleanup_(live_finish_freep) LiveFinish *f = calloc(1, sizeof(*f));
	Session *s = l->session;
	int r;

	if (!f)
		return -ENOMEM;
	l->drain_timer = sd_event_source_disable_unref(l->drain_timer);
	/* what the program wrote up to its end (or the window's) */
	r = span_ring_reader_drain_all(l->reader, clock_nanos(CLOCK_MONOTONIC));
	if (r >= 0)
		r = span_ring_reader_take_log(l->reader, &f->log);
	if (r < 0)
		return r;
	/* nothing reads the ring any more: its pages go now, not when the finished session does */
	l->reader = span_ring_reader_free(l->reader);
	f->session_id = strdup(s->id);
	f->comm = strdup(l->comm);
	f->end_reason = strdup(end_reason(l, m));
	if (!f->session_id || !f->comm || !f->end_reason ||
	    (l->build_id && !(f->build_id = strdup(l->build_id))))
		return -ENOMEM;
	f->facts = (LiveRunFacts){
		.session_id = f->session_id,
		.pid = (uint32_t)s->pid,
		.uid = s->owner,
		.comm = f->comm,
		.build_id = f->build_id,
		.end_reason = f->end_reason,
		.hz = m->hz,
		.samples_dropped = m->samples_dropped,
	};
	f->start_mono = m->start_mono_nanos;
	f->program_record = TAKE_PTR(l->program_record);
	f->reply_to = manager_call_take(&l->finish_call);
	*ret = TAKE_PTR(f);
	return 0;
}
