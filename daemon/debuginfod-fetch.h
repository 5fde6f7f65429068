/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Debug files of modules no debug directory covers, fetched by build-id from
 * the debuginfod servers of DEBUGINFOD_URLS with elfutils' libdebuginfod
 * (DESIGN.md §8 "Network": in profd, never in a helper, never on the sample
 * path; files land in a cache of profd's own).
 *
 * A request never waits on the network: the opener hands out the cached file
 * when there is one, else queues the build-id for the fetch thread and
 * answers -EAGAIN ("ask later"; a later session finds the file). The thread
 * fetches one build-id at a time, each within a time and a size limit, and
 * remembers failures for a while so that sessions asking again cause no
 * refetch storm.
 */

#include <stdint.h>

#include "cleanup.h"
#include "stack-quality.h"
#include "target-files.h"

typedef struct DebuginfodFetchLimits {
	uint64_t timeout_usec; /* a whole fetch, connecting included */
	uint64_t max_bytes;    /* a larger file is abandoned (and never handed out) */
	uint64_t retry_usec;   /* a failed build-id is not fetched again before this */
	unsigned max_queued;   /* build-ids waiting for the thread; more are refused, not queued */
	unsigned max_pending;  /* build-ids waiting, being fetched or remembered as failed */
} DebuginfodFetchLimits;

#define DEBUGINFOD_FETCH_DEFAULT_LIMITS                                                \
	((DebuginfodFetchLimits){ .timeout_usec = 120ULL * 1000000,                     \
				  .max_bytes = 2ULL << 30,                              \
				  .retry_usec = 600ULL * 1000000,                       \
				  .max_queued = 64,                                     \
				  .max_pending = 4096 })

typedef struct DebuginfodFetch DebuginfodFetch;

#if HAVE_LIBDEBUGINFOD
/*
 * Fetch from the servers libdebuginfod reads from DEBUGINFOD_URLS into
 * 'cache_dir' (made if missing, mode 0700), which becomes DEBUGINFOD_CACHE_PATH
 * of this process: call before other threads run. Starts the fetch thread.
 */
int debuginfod_fetch_new(const char *cache_dir, const DebuginfodFetchLimits *limits,
			 DebuginfodFetch **ret);
/* Abandons the fetch in progress and joins the thread. */
DebuginfodFetch *debuginfod_fetch_free(DebuginfodFetch *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(DebuginfodFetch *, debuginfod_fetch_free);

/* The opener of BUILD_ID requests (TargetFilePolicy.fetch); valid while 'f' lives. */
const TargetFileOpener *debuginfod_fetch_opener(DebuginfodFetch *f);
/* What became of the fetch of 'build_id' (lower-case hex), for the stack-quality report. */
StackQualityFetch debuginfod_fetch_state(DebuginfodFetch *f, const char *build_id);
#else
/* built without libdebuginfod (meson -Ddebuginfod=disabled): there is never one */
static inline DebuginfodFetch *debuginfod_fetch_free(DebuginfodFetch *f)
{
	return NULL;
}
static inline const TargetFileOpener *debuginfod_fetch_opener(DebuginfodFetch *f)
{
	return NULL;
}
static inline StackQualityFetch debuginfod_fetch_state(DebuginfodFetch *f, const char *build_id)
{
	return STACK_QUALITY_FETCH_NOT_ASKED;
}
#endif
