/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "default-resolver.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

#define FRAME_CACHE_SIZE 4096U /* direct-mapped; a power of two */
#define MAX_FRAMES 512U

typedef struct FrameCacheEntry {
	uint64_t key; /* address << 1 | kernel; 0 = empty */
	uint32_t frame;
} FrameCacheEntry;

struct FrameCache {
	uint64_t generation; /* of the maps the entries were computed against */
	FrameCacheEntry entries[FRAME_CACHE_SIZE];
};

int frame_cache_new(FrameCache **ret)
{
	FrameCache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

FrameCache *frame_cache_free(FrameCache *c)
{
	free(c);
	return NULL;
}

static uint32_t cache_slot(uint64_t key)
{
	key *= 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(key >> 52) & (FRAME_CACHE_SIZE - 1);
}

static const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static int frame_intern(Profile *profile, const ProcessMaps *maps, uint64_t addr, bool kernel,
			uint32_t *ret)
{
	const ProcessMapping *m = kernel ? NULL : process_maps_find(maps, addr);
	ProfileFrame frame = {
		.module = PROFILE_NONE,
		.build_id = PROFILE_NONE,
		.file = PROFILE_NONE,
		.address = addr,
		.kernel = kernel,
	};
	char name[256];
	int r;

	if (kernel) {
		r = profile_intern_string(profile, PROFILE_KERNEL_MODULE, &frame.module);
		if (r < 0)
			return r;
		snprintf(name, sizeof(name), PROFILE_KERNEL_MODULE "+0x%" PRIx64, addr);
	} else if (m && m->path) {
		frame.address = addr - m->start + m->pgoff;
		r = profile_intern_string(profile, m->path, &frame.module);
		if (r < 0)
			return r;
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, path_basename(m->path), frame.address);
	} else
		snprintf(name, sizeof(name), "[unknown]+0x%" PRIx64, addr);

	r = profile_intern_string(profile, name, &frame.function);
	if (r < 0)
		return r;
	return profile_intern_frame(profile, &frame, ret);
}

int default_resolve_frame(FrameCache *cache, Profile *profile, const ProcessMaps *maps,
			  uint64_t addr, bool kernel, uint32_t *ret)
{
	uint64_t key = addr << 1 | kernel;
	FrameCacheEntry *e;
	int r;

	if (!cache || key == 0)
		return frame_intern(profile, maps, addr, kernel, ret);

	if (maps && cache->generation != maps->generation) {
		/* a mapping changed: an address may now belong to another module */
		memset(cache->entries, 0, sizeof(cache->entries));
		cache->generation = maps->generation;
	}
	e = &cache->entries[cache_slot(key)];
	if (e->key == key) {
		*ret = e->frame;
		return 0;
	}
	r = frame_intern(profile, maps, addr, kernel, &e->frame);
	if (r < 0) {
		e->key = 0;
		return r;
	}
	e->key = key;
	*ret = e->frame;
	return 0;
}

/* The user IP: from the user registers when the sample hit the kernel, else the IP itself. */
static bool sample_user_ip(const PerfSample *sample, uint64_t *ret)
{
	enum { PERF_REG_X86_IP = 8 };

	if (!sample->kernel_mode) {
		*ret = sample->ip;
		return true;
	}
	return perf_sample_get_reg(sample, PERF_REG_X86_IP, ret) == 0;
}

int default_resolve_sample(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			   Profile *profile, SampleStack *ret)
{
	FrameCache *cache = userdata;
	uint32_t frames[MAX_FRAMES];
	size_t n = 0;
	bool kernel = sample->kernel_mode, truncated = false, have_user = false;
	uint64_t user_ip;
	int r;

	/* leaf first, as the kernel writes it; PERF_CONTEXT_* markers switch the mode */
	for (uint64_t i = 0; i < sample->n_callchain; i++) {
		uint64_t addr = sample->callchain[i];

		if (addr >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = addr == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (n >= MAX_FRAMES) {
			truncated = true;
			break;
		}
		r = default_resolve_frame(cache, profile, maps, addr, kernel, &frames[n]);
		if (r < 0)
			return r;
		n++;
		have_user = have_user || !kernel;
	}

	/* DWARF mode leaves the user part out of the callchain: keep at least the user IP */
	if (!have_user && !truncated && sample_user_ip(sample, &user_ip)) {
		if (n >= MAX_FRAMES)
			truncated = true;
		else {
			r = default_resolve_frame(cache, profile, maps, user_ip, false, &frames[n]);
			if (r < 0)
				return r;
			n++;
		}
	}

	*ret = (SampleStack){ .stack = PROFILE_NONE, .truncated = truncated };
	if (n == 0)
		return 0;
	return profile_intern_stack_leaf_first(profile, frames, n, &ret->stack);
}
