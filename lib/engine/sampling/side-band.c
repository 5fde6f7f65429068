/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "side-band.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "perf-event.h"
#include "ring.h"


typedef struct SideBandCpu {
	int fd;
	PerfRing *ring;
} SideBandCpu;

/* One drained record: where its bytes are in the batch, and when it happened. */
typedef struct BatchEntry {
	uint64_t time;
	size_t offset, size;
	size_t seq; /* drain order: ties keep it */
} BatchEntry;

struct SideBand {
	SideBandCpu *cpus;
	size_t n_cpus;
	PerfRecordFormat format;
	uint64_t lost, bytes;

	/* the batch of one drain, reused */
	uint8_t *data;
	size_t data_size, data_allocated;
	BatchEntry *entries;
	size_t n_entries, entries_allocated;
};

SideBand *side_band_free(SideBand *sb)
{
	if (!sb)
		return NULL;
	for (size_t i = 0; i < sb->n_cpus; i++) {
		ring_free(sb->cpus[i].ring);
		safe_close(sb->cpus[i].fd);
	}
	free(sb->cpus);
	free(sb->data);
	free(sb->entries);
	free(sb);
	return NULL;
}

static int open_cpu(int cpu, int cgroup_fd, size_t ring_bytes, SideBandCpu *ret)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = SIDE_BAND_SAMPLE_TYPE,
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(ring_bytes / 2),
	};
	_cleanup_close_ int fd = -1;
	int r;

	perf_event_attr_track(&attr);
	r = perf_event_open_cpu(&attr, cgroup_fd, cpu, &fd);
	if (r < 0)
		return r;
	r = ring_map(fd, ring_bytes, &ret->ring);
	if (r < 0)
		return r;
	ret->fd = TAKE_FD(fd);
	return 0;
}

int side_band_open(int cgroup_fd, size_t ring_bytes, SideBand **ret)
{
	_cleanup_(side_band_freep) SideBand *sb = calloc(1, sizeof(*sb));
	_cleanup_free_ int *cpus = NULL;
	size_t n;
	int r;

	if (!sb)
		return -ENOMEM;
	sb->format = (PerfRecordFormat){ .sample_type = SIDE_BAND_SAMPLE_TYPE, .sample_id_all = true };
	r = perf_online_cpus(&cpus, &n);
	if (r < 0)
		return r;
	sb->cpus = calloc(n, sizeof(SideBandCpu));
	if (!sb->cpus)
		return -ENOMEM;
	ring_bytes = ring_data_size_for(ring_bytes);
	for (size_t i = 0; i < n; i++) {
		sb->cpus[i].fd = -1;
		r = open_cpu(cpus[i], cgroup_fd, ring_bytes, &sb->cpus[i]);
		if (r < 0)
			return r;
		sb->n_cpus++;
	}
	*ret = TAKE_PTR(sb);
	return 0;
}

int side_band_watch(SideBand *sb, SessionTimers *timers, unsigned source)
{
	int r;

	/* edge-triggered: a ring stays readable until drained, and drains happen on ticks too */
	for (size_t i = 0; i < sb->n_cpus; i++) {
		r = session_timers_watch(timers, sb->cpus[i].fd, source, EPOLLIN | EPOLLET);
		if (r < 0)
			return r;
	}
	return 0;
}

static int batch_add(void *userdata, const struct perf_event_header *header, size_t size)
{
	SideBand *sb = userdata;
	PerfRecord rec;
	int r;

	r = perf_record_parse(&sb->format, header, size, &rec);
	if (r < 0)
		return r;
	if (rec.type == PERF_RECORD_LOST) {
		sb->lost += rec.lost.lost;
		return 0;
	}
	if (rec.type != PERF_RECORD_MMAP2 && rec.type != PERF_RECORD_COMM &&
	    rec.type != PERF_RECORD_FORK && rec.type != PERF_RECORD_EXIT)
		return 0;
	r = ARRAY_RESERVE(sb->data, sb->data_allocated, sb->data_size + size, 64 * 1024);
	if (r >= 0)
		r = ARRAY_RESERVE(sb->entries, sb->entries_allocated, sb->n_entries + 1, 256);
	if (r < 0)
		return r;
	memcpy(sb->data + sb->data_size, header, size);
	sb->entries[sb->n_entries] = (BatchEntry){
		.time = rec.id.time,
		.offset = sb->data_size,
		.size = size,
		.seq = sb->n_entries,
	};
	sb->n_entries++;
	sb->data_size += size;
	return 0;
}

static int entry_compare(const void *a, const void *b)
{
	const BatchEntry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int side_band_drain(SideBand *sb, SideBandRecordFn fn, void *userdata)
{
	int r = 0;

	sb->data_size = sb->n_entries = 0;
	for (size_t i = 0; i < sb->n_cpus; i++) {
		uint64_t bytes = 0;

		r = ring_drain(sb->cpus[i].ring, batch_add, sb, &bytes);
		sb->bytes += bytes;
		if (r < 0)
			return r;
	}
	if (sb->n_entries > 1)
		qsort(sb->entries, sb->n_entries, sizeof(BatchEntry), entry_compare);
	for (size_t i = 0; i < sb->n_entries; i++) {
		const BatchEntry *e = &sb->entries[i];
		const struct perf_event_header *raw = (const void *)(sb->data + e->offset);
		PerfRecord rec;

		r = perf_record_parse(&sb->format, raw, e->size, &rec);
		if (r >= 0)
			r = fn(userdata, raw, &rec);
		if (r < 0)
			return r;
	}
	return 0;
}

uint64_t side_band_lost(const SideBand *sb)
{
	return sb->lost;
}

uint64_t side_band_bytes(const SideBand *sb)
{
	return sb->bytes;
}
