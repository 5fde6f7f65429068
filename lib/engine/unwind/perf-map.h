/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JIT symbols from /tmp/perf-<pid>.map ("START SIZE name" lines in hex, the
 * convention of perf, V8, the JVM agents and LuaJIT). JITs append to the file
 * while running, so a lookup that misses reloads it when it changed.
 */

#include <stdint.h>
#include <sys/types.h>

typedef struct PerfMap PerfMap;

/*
 * 'path' NULL: the target's /tmp/perf-<pid>.map, through /proc/<pid>/root and
 * with the pid of its own namespace, as perf looks for it. The file need not
 * exist yet.
 */
int perf_map_new(pid_t pid, const char *path, PerfMap **ret);
PerfMap *perf_map_free(PerfMap *m);

/* The symbol covering 'addr'. Returns 0, or -ENOENT. */
int perf_map_lookup(PerfMap *m, uint64_t addr, const char **ret_name, uint64_t *ret_start);
/* The map's name as the target wrote it ("/tmp/perf-<pid>.map"), for frames' module. */
const char *perf_map_name(const PerfMap *m);
