/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "profile-builder.h"

#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "default-resolver.h"

struct ProfileBuilder {
	uint32_t pid;           /* 0: many processes */
	Profile *profile;
	ProcessMaps *maps;      /* one process */
	ProcessTable *processes; /* many */
	FrameCache *cache; /* the default resolver's */
	SampleResolveFn resolve;
	void *resolve_userdata;
	ProcessExitFn on_exit;
	void *on_exit_userdata;
	uint64_t start_mono;
	ProfileBuilderStats stats;
};

ProfileBuilder *profile_builder_free(ProfileBuilder *b)
{
	if (!b)
		return NULL;
	profile_free(b->profile);
	process_maps_free(b->maps);
	process_table_free(b->processes);
	frame_cache_free(b->cache);
	free(b);
	return NULL;
}

int profile_builder_new(uint32_t pid, uint64_t period_nanos, SampleResolveFn resolve,
			void *resolve_userdata, ProfileBuilder **ret)
{
	_cleanup_(profile_builder_freep) ProfileBuilder *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	b->pid = pid;
	r = profile_new(&b->profile);
	if (r < 0)
		return r;
	b->profile->pid = pid;
	b->profile->period_nanos = period_nanos;
	b->profile->multi_process = pid == 0;
	r = pid ? process_maps_new(pid, &b->maps) : process_table_new(&b->processes);
	if (r < 0)
		return r;
	if (!resolve) {
		r = frame_cache_new(&b->cache);
		if (r < 0)
			return r;
		resolve = default_resolve_sample;
		resolve_userdata = b->cache;
	}
	b->resolve = resolve;
	b->resolve_userdata = resolve_userdata;
	*ret = TAKE_PTR(b);
	return 0;
}

void profile_builder_set_start(ProfileBuilder *b, uint64_t start_mono, uint64_t start_unix)
{
	b->start_mono = start_mono;
	b->profile->start_unix_nanos = start_unix;
}

void profile_builder_set_duration(ProfileBuilder *b, uint64_t duration_nanos)
{
	if (b->profile)
		b->profile->duration_nanos = duration_nanos;
}

/* A thread of a multi-process target: tied to its process, named as the records told. */
static int builder_name_thread(ProfileBuilder *b, const TargetProcess *p, uint32_t tid)
{
	const char *name = target_process_thread_name(p, tid);
	const char *process = p->comm[0] ? p->comm : NULL;
	int r = 0;

	if (!profile_find_thread(b->profile, tid))
		r = profile_set_thread(b->profile, tid, name ?: process);
	return r < 0 ? r : profile_set_thread_process(b->profile, tid, p->pid, process);
}

/*
 * An aggregated sample (PerfSample.weight) stands for that many, counted in
 * the address space it names (PerfSample.addr) and without a time of its own.
 */
static int builder_on_sample(ProfileBuilder *b, const PerfSample *sample)
{
	SampleStack stack = { .stack = PROFILE_NONE };
	const ProcessMaps *maps = b->maps;
	uint64_t n = sample->weight ?: 1, t = 0;
	uint32_t space = sample->addr < UINT32_MAX ? (uint32_t)sample->addr : UINT32_MAX;
	TargetProcess *p = NULL;
	int r;

	if (b->processes) {
		r = process_table_get(b->processes, sample->pid, &p);
		if (r < 0)
			return r;
		maps = sample->weight ? target_process_space(p, space) : p->spaces[p->n_spaces - 1];
	}
	/*
	 * Even for want of memory: in the sandboxed unwinder that is mostly its
	 * address-space limit, which the target's files can exhaust. A real
	 * shortage fails the profile's own allocations below.
	 */
	if (b->resolve(b->resolve_userdata, sample, maps, b->profile, &stack) < 0)
		stack = (SampleStack){ .stack = PROFILE_NONE, .unwind_failed = true };
	b->stats.unwind_failures += stack.unwind_failed ? n : 0;
	b->stats.truncated_stacks += stack.truncated ? n : 0;

	if (!sample->weight && sample->time > b->start_mono)
		t = sample->time - b->start_mono;
	r = 0;
	for (uint64_t i = 0; r >= 0 && i < n; i++)
		r = profile_add_sample(b->profile, sample->tid, t, stack.stack);
	if (r >= 0 && p)
		r = builder_name_thread(b, p, sample->tid);
	if (r < 0)
		return r;
	b->stats.samples += n;
	return 0;
}

/* Many processes: the table follows every process; a renamed thread keeps its new name. */
static int builder_on_process_record(ProfileBuilder *b, const PerfRecord *rec)
{
	int r;

	if (rec->type == PERF_RECORD_SAMPLE)
		return builder_on_sample(b, &rec->sample);
	r = process_table_apply(b->processes, rec);
	if (r >= 0 && rec->type == PERF_RECORD_COMM && profile_find_thread(b->profile, rec->comm.tid))
		r = profile_set_thread(b->profile, rec->comm.tid, rec->comm.comm);
	if (r >= 0 && b->on_exit && rec->type == PERF_RECORD_EXIT && rec->task.pid == rec->task.tid)
		b->on_exit(b->on_exit_userdata, rec->task.pid);
	return r;
}

int profile_builder_add(ProfileBuilder *b, const PerfRecord *rec)
{
	if (!b->profile)
		return -ESTALE; /* stolen: the profile is someone else's now */
	if (b->processes)
		return builder_on_process_record(b, rec);
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		/* without inherit_thread, forked children inherit events too: not our target */
		return rec->sample.pid == b->pid ? builder_on_sample(b, &rec->sample) : 0;
	case PERF_RECORD_MMAP2:
		return rec->mmap2.pid == b->pid ? process_maps_apply_mmap2(b->maps, &rec->mmap2) : 0;
	case PERF_RECORD_COMM:
		if (rec->comm.pid != b->pid)
			return 0;
		/* exec replaced the address space; its new mappings follow as MMAP2 records */
		if (rec->comm.exec)
			process_maps_reset(b->maps);
		return profile_set_thread(b->profile, rec->comm.tid, rec->comm.comm);
	default:
		return 0;
	}
}

void profile_builder_set_exit_hook(ProfileBuilder *b, ProcessExitFn fn, void *userdata)
{
	b->on_exit = fn;
	b->on_exit_userdata = userdata;
}

const Profile *profile_builder_get_profile(const ProfileBuilder *b)
{
	return b->profile;
}

Profile *profile_builder_steal_profile(ProfileBuilder *b)
{
	return TAKE_PTR(b->profile);
}

const ProcessMaps *profile_builder_get_maps(const ProfileBuilder *b)
{
	return b->maps;
}

const ProcessTable *profile_builder_get_processes(const ProfileBuilder *b)
{
	return b->processes;
}

int profile_builder_set_target(ProfileBuilder *b, const char *target, const char *unit)
{
	return b->profile ? profile_set_target(b->profile, target, unit) : -ESTALE;
}

void profile_builder_get_stats(const ProfileBuilder *b, ProfileBuilderStats *ret)
{
	*ret = b->stats;
}
