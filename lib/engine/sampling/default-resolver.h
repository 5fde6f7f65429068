/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The resolver a session uses when its caller gives none: the kernel
 * callchain and the user part of the sample as raw frames, named
 * "module+0xoffset" from the process maps (or "[unknown]+0xaddr" when
 * unmapped); kernel frames keep their address under PROFILE_KERNEL_MODULE.
 * Unwinders can reuse default_resolve_frame() for what they cannot name.
 */

#include <stdbool.h>
#include <stdint.h>

#include "perf-sample.h"

/* Remembers address -> frame id for one Profile, so hot addresses are formatted once. */
typedef struct FrameCache FrameCache;

int frame_cache_new(FrameCache **ret);
FrameCache *frame_cache_free(FrameCache *c);

/* SampleResolveFn; userdata is a FrameCache for that profile, or NULL. */
int default_resolve_sample(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			   Profile *profile, SampleStack *ret);

/* Intern the raw frame for one address ('cache' may be NULL). */
int default_resolve_frame(FrameCache *cache, Profile *profile, const ProcessMaps *maps,
			  uint64_t addr, bool kernel, uint32_t *ret);
