/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "target-snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "array.h"
#include "cleanup.h"
#include "perf-synth.h"
#include "process-maps.h"
#include "task-list.h"

void record_buffer_clear(RecordBuffer *b)
{
	free(b->data);
	*b = (RecordBuffer){};
}

int record_buffer_append(RecordBuffer *b, const struct perf_event_header *record)
{
	int r = ARRAY_RESERVE(b->data, b->allocated, b->size + record->size, 16 * 1024);

	if (r < 0)
		return r;
	memcpy(b->data + b->size, record, record->size);
	b->size += record->size;
	return 0;
}

/*
 * Its code mappings (data mappings name nothing in a stack; perf synthesizes
 * the same), then its threads' names.
 */
static int snapshot(uint32_t pid, const ProcessMaps *maps, const pid_t *tids, size_t n_tids,
		    const PerfRecordFormat *format, uint64_t time, RecordBuffer *out)
{
	/* a few KiB: off the stack of whichever thread snapshots */
	_cleanup_free_ PerfSynthRecord *rec = malloc(sizeof(*rec));
	int r = 0;

	if (!rec)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < maps->n_mappings; i++) {
		const ProcessMapping *m = &maps->mappings[i];

		if (!(m->prot & PROT_EXEC))
			continue;
		r = perf_synth_mmap2(format, pid, m, time, rec);
		if (r == -ENAMETOOLONG) {
			r = 0;
			continue;
		}
		if (r >= 0)
			r = record_buffer_append(out, &rec->header);
	}
	for (size_t i = 0; r >= 0 && i < n_tids; i++) {
		char comm[16];

		/* a thread gone meanwhile keeps no name */
		if (task_read_comm((pid_t)pid, tids[i], comm) < 0)
			continue;
		r = perf_synth_comm(format, pid, (uint32_t)tids[i], comm, time, rec);
		if (r >= 0)
			r = record_buffer_append(out, &rec->header);
	}
	return r;
}

int target_snapshot_process(uint32_t pid, const PerfRecordFormat *format, uint64_t time,
			    RecordBuffer *out, size_t *ret_threads)
{
	_cleanup_(process_maps_freep) ProcessMaps *maps = NULL;
	_cleanup_free_ pid_t *tids = NULL;
	size_t n_tids;
	int r;

	r = process_maps_load(pid, &maps);
	if (r < 0)
		return r;
	r = task_list_read((pid_t)pid, &tids, &n_tids);
	if (r < 0)
		return r;
	r = snapshot(pid, maps, tids, n_tids, format, time, out);
	if (r < 0)
		return r;
	*ret_threads = n_tids;
	return 0;
}

int target_snapshot_known_process(uint32_t pid, const ProcessMaps *maps,
				  const PerfRecordFormat *format, uint64_t time, RecordBuffer *out)
{
	_cleanup_free_ pid_t *tids = NULL;
	size_t n_tids = 0;

	/* gone: its mappings as known, no thread to name */
	if (task_list_read((pid_t)pid, &tids, &n_tids) < 0)
		n_tids = 0;
	return snapshot(pid, maps, tids, n_tids, format, time, out);
}

/* One process of a table: its current space's code, then its names. */
static int snapshot_table_process(const TargetProcess *p, const PerfRecordFormat *format,
				  uint64_t time, PerfSynthRecord *rec, RecordBuffer *out)
{
	const ProcessMaps *maps = p->n_spaces > 0 ? p->spaces[p->n_spaces - 1] : NULL;
	int r = 0;

	for (size_t i = 0; maps && r >= 0 && i < maps->n_mappings; i++) {
		if (!(maps->mappings[i].prot & PROT_EXEC))
			continue;
		r = perf_synth_mmap2(format, p->pid, &maps->mappings[i], time, rec);
		if (r == -ENAMETOOLONG) {
			r = 0;
			continue;
		}
		if (r >= 0)
			r = record_buffer_append(out, &rec->header);
	}
	if (r >= 0 && p->comm[0]) {
		r = perf_synth_comm(format, p->pid, p->pid, p->comm, time, rec);
		if (r >= 0)
			r = record_buffer_append(out, &rec->header);
	}
	for (size_t i = 0; r >= 0 && i < p->n_threads; i++) {
		r = perf_synth_comm(format, p->pid, p->threads[i].tid, p->threads[i].comm, time, rec);
		if (r >= 0)
			r = record_buffer_append(out, &rec->header);
	}
	return r;
}

int target_snapshot_table(const ProcessTable *table, const PerfRecordFormat *format, uint64_t time,
			  RecordBuffer *out)
{
	_cleanup_free_ PerfSynthRecord *rec = malloc(sizeof(*rec)); /* a few KiB: off the stack */
	int r = 0;

	if (!rec)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < process_table_size(table); i++) {
		const TargetProcess *p = process_table_at(table, i);

		if (!p->excluded)
			r = snapshot_table_process(p, format, time, rec, out);
	}
	return r;
}
