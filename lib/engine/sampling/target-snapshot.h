/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The processes of a multi-process target as they are when its session
 * starts, in the records a consumer reads anyway (perf record synthesizes the
 * same): per process, one MMAP2 per code mapping of /proc/PID/maps and one
 * COMM per thread. Kept as bytes until the session hands them on.
 */

#include <stddef.h>
#include <stdint.h>

#include "perf-record.h"
#include "process-table.h"

typedef struct RecordBuffer {
	uint8_t *data; /* records back to back, each 8-byte aligned and sized by its header */
	size_t size, allocated;
} RecordBuffer;

void record_buffer_clear(RecordBuffer *b);
int record_buffer_append(RecordBuffer *b, const struct perf_event_header *record);

/*
 * Append process 'pid' as of 'time': its code mappings and its threads' names.
 * -ESRCH when it is gone; *ret_threads gets how many threads it has.
 */
int target_snapshot_process(uint32_t pid, const PerfRecordFormat *format, uint64_t time,
			    RecordBuffer *out, size_t *ret_threads);
/*
 * The same of a process whose address space is known already ('maps', e.g. a
 * ProcessTable's): its code mappings, and the names of the threads it has now.
 */
int target_snapshot_known_process(uint32_t pid, const ProcessMaps *maps,
				  const PerfRecordFormat *format, uint64_t time, RecordBuffer *out);

/*
 * Append the processes of 'table' as its records told them, as of 'time': per
 * process not excluded, the code mappings of its current address space and
 * the names of it and its threads. For a consumer that starts over (a new
 * unwinder after one died) and would otherwise know nothing of what came before.
 */
int target_snapshot_table(const ProcessTable *table, const PerfRecordFormat *format, uint64_t time,
			  RecordBuffer *out);
