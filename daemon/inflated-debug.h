/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Separate debug files of system binaries with their compressed sections
 * inflated, kept in the state directory (inflated-debug/) for every caller's
 * unwinder (DESIGN.md §8 "Caches"). libdw inflates every compressed .debug_*
 * section of a file it opens — ~45 ms for Debian's libc6-dbg — in each uid's
 * unwinder, and again in each unwinder after a restart; an inflated copy is
 * mapped instead and only the pages naming touches are read.
 *
 * Only files owned by root and writable by no one else are copied (what every
 * caller may share; a caller's own debug files are handed over as they are).
 * A copy is named by the identity of the file it was made from (device,
 * inode, size, mtime) and the build-id asked for, so a changed file never
 * gets an old copy; the unwinder checks the build-id of what it gets as it
 * does for any debug file. Copies are made on a thread of their own at nice
 * 19, never on the loop: the first request of a file gets the file itself and
 * queues its copy; inflated_debug_prepare() queues one ahead (system-prewarm.h:
 * the C library's, when profd starts). Past 'max_bytes' the least recently
 * handed over copies go.
 */

#include <stdint.h>
#include <systemd/sd-event.h>

#include "target-files.h"

#define INFLATED_DEBUG_DIR "inflated-debug"

typedef struct InflatedDebug InflatedDebug;

int inflated_debug_new(sd_event *event, int state_fd, uint64_t max_bytes, InflatedDebug **ret);
/* Waits for the copy being made, if any. */
InflatedDebug *inflated_debug_free(InflatedDebug *c);

/* For TargetFilePolicy.debug_substitute; valid as long as 'c'. */
const DebugFileSubstitute *inflated_debug_substitute(InflatedDebug *c);

/* Queue the copy of the debug file of 'build_id' (found as a session's would be), if needed. */
void inflated_debug_prepare(InflatedDebug *c, const uint8_t *build_id, size_t size);
