/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JIT symbols from the target's /tmp/perf-<pid>.map ("START SIZE name" lines
 * in hex, the convention of perf, V8, the JVM agents and LuaJIT). The file is
 * opened through the TargetFileOpener (owner and size rules) and kept open;
 * JITs append to it while running, so a lookup that misses reads what was
 * appended since. A later line for the same start wins, as in perf.
 */

#include <stdbool.h>
#include <stdint.h>

#include "target-files.h"

typedef struct PerfMap PerfMap;

/*
 * The map of target 'pid', which calls itself 'ns_pid' in its own pid
 * namespace (0: the same). The file need not exist yet. 'files' must outlive
 * the map.
 */
int perf_map_new(const TargetFileOpener *files, uint32_t pid, uint32_t ns_pid, PerfMap **ret);
PerfMap *perf_map_free(PerfMap *m);

/* The symbol covering 'addr'. Returns 0, or -ENOENT (-ENOMEM). */
int perf_map_lookup(PerfMap *m, uint64_t addr, const char **ret_name, uint64_t *ret_start);
/* The map's name as the target wrote it ("/tmp/perf-<pid>.map"), for frames' module. */
const char *perf_map_name(const PerfMap *m);
/* Has the target a map file at all (so far)? */
bool perf_map_exists(const PerfMap *m);
