/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A target's files, opened while the target can still vouch for them.
 *
 * Unwinding lags sampling (by seconds on a loaded machine, more so in the
 * sandboxed helper), so the opener is often asked about a file after the
 * target unmapped it or exited, when /proc/PID/maps no longer shows it. The
 * cache is told of every file mapping as the session sees it happen (MMAP2
 * records, on the thread that drains the rings) and opens the code files,
 * jitdump and perf map right then, with target_file_open()'s rules; later
 * requests for those files are served from the descriptors kept (a dup),
 * matched by address and file identity, and debug files with the owner and
 * paths learnt then. Anything else goes to target_file_open().
 *
 * Thread-safe: noted on one thread, opened from another.
 */

#include <stdint.h>

#include "process-maps.h"
#include "target-files.h"

typedef struct TargetFileCache TargetFileCache;

/* Files of target 'pid' (other pids are opened live); 'policy' is copied by reference. */
int target_file_cache_new(uint32_t pid, const TargetFilePolicy *policy, TargetFileCache **ret);
TargetFileCache *target_file_cache_free(TargetFileCache *c);

/* Process 'pid' maps 'm' now: open its file if it is the target's code (or jitdump file). */
int target_file_cache_note_mapping(TargetFileCache *c, uint32_t pid, const ProcessMapping *m);

/* TargetFileOpenFn; 'userdata' is the cache. */
int target_file_cache_open(const TargetFileRequest *request, void *userdata);
