/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JIT symbols from the target's jitdump file (jit-<pid>.dump, the format of
 * the Linux tree's tools/perf/Documentation/jitdump-specification.txt, as
 * perf and samply read it: V8 with --perf-prof, LuaJIT, .NET, the JVM
 * agents). The JIT maps the file so profilers find it among its mappings; it
 * is opened through the TargetFileOpener and read as it grows.
 *
 * Code is named by time: a JIT_CODE_LOAD names [code_addr, +code_size) from
 * its timestamp on, until other code is loaded over it or it moves
 * (JIT_CODE_MOVE), so addresses the JIT frees and reuses name what ran at
 * the sample's time. Timestamps and sample times are both CLOCK_MONOTONIC.
 */

#include <stdbool.h>
#include <stdint.h>

#include "process-maps.h"
#include "target-files.h"

typedef struct JitDump JitDump;

/* The mapping of a jitdump file in 'maps' ("jit-<digits>.dump"), or NULL. */
const ProcessMapping *jitdump_find_mapping(const ProcessMaps *maps);

/*
 * The jitdump file target 'pid' maps as 'm' (of jitdump_find_mapping()),
 * named by its path in frames. 'files' must outlive it. -EPROTONOSUPPORT for
 * a file of another format or byte order.
 */
int jitdump_open(const TargetFileOpener *files, uint32_t pid, const ProcessMapping *m,
		 JitDump **ret);
JitDump *jitdump_free(JitDump *j);

/*
 * The code covering 'addr' at 'time' (reading what the JIT appended since
 * the last miss). Returns 0, or -ENOENT (-ENOMEM).
 */
int jitdump_lookup(JitDump *j, uint64_t addr, uint64_t time, const char **ret_name,
		   uint64_t *ret_start);
/* The file's path as the target maps it, for frames' module. */
const char *jitdump_path(const JitDump *j);
