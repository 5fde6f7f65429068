/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a live run's span ring, as hostile input, into a SpanLog (span-log.h). */
#include "span-log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"

/* Records copied out of the shared memory at once, before their slot's head is read again. */
#define CHUNK_RECORDS 1024
/* How far in the future a time may be and still be taken for clock skew, not a lie. */
#define FUTURE_SLACK_NS 1000000000ULL

typedef struct SlotCursor {
	uint32_t tid;  /* profd's id of the slot's thread; 0 until the program named it */
	uint64_t tail; /* records of the slot read so far */
	bool refused;  /* its thread is not one of the program's: never read */
} SlotCursor;

struct SpanRingReader {
	SpanRingReaderOptions o; /* the geometry is profd's own: the header's copy is not trusted */
	uint8_t *base;
	size_t size;
	uint32_t slot_size;
	SlotCursor *slots;
	uint32_t transitions_read;
	uint32_t next_slot; /* where a drain that ran out of budget goes on */
	SpanLog *log;
	SpanRingRecord chunk[CHUNK_RECORDS];
};

SpanLog *span_log_free(SpanLog *log)
{
	if (!log)
		return NULL;
	free(log->intervals);
	free(log);
	return NULL;
}

SpanRingReader *span_ring_reader_free(SpanRingReader *r)
{
	if (!r)
		return NULL;
	if (r->base)
		munmap(r->base, r->size);
	free(r->slots);
	span_log_free(r->log);
	free(r);
	return NULL;
}

/* A memfd of 'size' bytes holding a fresh ring header, sealed against resizing. */
static int ring_memfd_new(const SpanRingGeometry *g, size_t size)
{
	_cleanup_close_ int fd = -1;
	SpanRingHeader header;
	ssize_t n;

	fd = memfd_create("profd-span-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return negative_errno();
	if (ftruncate(fd, (off_t)size) < 0)
		return negative_errno();
	span_ring_header_init(&header, g);
	n = pwrite(fd, &header, sizeof(header), 0);
	if (n < 0)
		return negative_errno();
	if ((size_t)n != sizeof(header))
		return -EIO;
	/* a program that could shrink it would make profd's reads fault (SIGBUS) */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return negative_errno();
	return TAKE_FD(fd);
}

int span_ring_reader_new(const SpanRingReaderOptions *o, int *ret_memfd, SpanRingReader **ret)
{
	_cleanup_(span_ring_reader_freep) SpanRingReader *r = NULL;
	_cleanup_close_ int fd = -1;
	void *base;
	size_t size;
	int k;

	k = span_ring_geometry_size(&o->geometry, &size);
	if (k < 0)
		return k;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->slot_size = (uint32_t)(sizeof(SpanRingSlot) +
				  (size_t)o->geometry.slot_records * sizeof(SpanRingRecord));
	r->slots = calloc(o->geometry.n_slots, sizeof(SlotCursor));
	r->log = calloc(1, sizeof(SpanLog));
	if (!r->slots || !r->log)
		return -ENOMEM;
	fd = ring_memfd_new(&o->geometry, size);
	if (fd < 0)
		return fd;
	base = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return negative_errno();
	r->base = base;
	r->size = size;
	*ret_memfd = TAKE_FD(fd);
	*ret = TAKE_PTR(r);
	return 0;
}

/* The program's time in profd's clock; false when it cannot be one. */
static bool to_profd_time(const SpanRingReader *r, uint64_t t, uint64_t now_ns, uint64_t *ret)
{
	int64_t off = r->o.clock_offset_ns;

	if (off < 0 && t < (uint64_t)-(off + 1) + 1)
		return false;
	if (off > 0 && t > UINT64_MAX - (uint64_t)off)
		return false;
	t = off < 0 ? t - ((uint64_t)-(off + 1) + 1) : t + (uint64_t)off;
	if (t > now_ns + FUTURE_SLACK_NS)
		return false;
	*ret = t;
	return true;
}

static int log_interval(SpanRingReader *r, const SpanInterval *in)
{
	SpanLog *log = r->log;
	int k;

	if (log->stats.spans >= r->o.max_spans) {
		log->stats.spans_over_limit++;
		return 0;
	}
	k = ARRAY_RESERVE(log->intervals, log->allocated, log->n_intervals + 1, 4096);
	if (k < 0)
		return k;
	log->intervals[log->n_intervals++] = *in;
	log->stats.spans++;
	return 0;
}

/* Records [first, first + n) of a slot, copied; those the writer may have overwritten meanwhile are lost. */
static int read_records(SpanRingReader *r, SpanRingSlot *slot, const SlotCursor *c, uint64_t first,
			size_t n, uint64_t now_ns)
{
	uint64_t mask = r->o.geometry.slot_records - 1, head;
	int k;

	for (size_t i = 0; i < n; i++)
		memcpy(&r->chunk[i], &slot->records[(first + i) & mask], sizeof(SpanRingRecord));
	/* a record is ours if the writer did not come round to its place while we copied */
	head = atomic_load_explicit(&slot->head, memory_order_acquire);
	for (size_t i = 0; i < n; i++) {
		const SpanRingRecord *rec = &r->chunk[i];
		SpanInterval in = { .tid = c->tid, .stage = rec->stage };

		if (head > r->o.geometry.slot_records && first + i < head - r->o.geometry.slot_records) {
			r->log->stats.spans_lost++;
			continue;
		}
		if (rec->stage >= _STAGE_MAX || rec->begin_ns > rec->end_ns ||
		    !to_profd_time(r, rec->begin_ns, now_ns, &in.begin_ns) ||
		    !to_profd_time(r, rec->end_ns, now_ns, &in.end_ns)) {
			r->log->stats.spans_invalid++;
			continue;
		}
		k = log_interval(r, &in);
		if (k < 0)
			return k;
	}
	return 0;
}

/* One slot's new records, at most *budget of them (counted down). */
static int drain_slot(SpanRingReader *r, uint32_t i, uint64_t now_ns, uint64_t *budget)
{
	SpanRingSlot *slot = span_ring_slot(r->base, sizeof(SpanRingHeader), r->slot_size, i);
	SlotCursor *c = &r->slots[i];
	uint64_t head, n;
	int k;

	if (c->refused)
		return 0;
	if (c->tid == 0) {
		uint32_t tid = atomic_load_explicit(&slot->tid, memory_order_acquire);

		if (tid == 0)
			return 0; /* claimed, not named yet: its records wait */
		/* the first name sticks: a thread cannot move its spans to another later */
		c->tid = r->o.map_tid ? r->o.map_tid(r->o.userdata, tid) : tid;
		if (c->tid == SPAN_TID_LATER) {
			c->tid = 0;
			return 0;
		}
		if (c->tid == 0) {
			c->refused = true;
			r->log->stats.ring_errors++;
			return 0;
		}
		r->log->stats.threads++;
	}
	head = atomic_load_explicit(&slot->head, memory_order_acquire);
	if (head < c->tail) {
		r->log->stats.ring_errors++;
		c->tail = head;
		return 0;
	}
	n = head - c->tail;
	if (n > r->o.geometry.slot_records) {
		r->log->stats.spans_lost += n - r->o.geometry.slot_records;
		c->tail = head - r->o.geometry.slot_records;
	}
	if (r->log->stats.spans >= r->o.max_spans) {
		/* nothing more is kept: counted without being read */
		r->log->stats.spans_over_limit += head - c->tail;
		c->tail = head;
		return 0;
	}
	if (head - c->tail > *budget)
		head = c->tail + *budget;
	*budget -= head - c->tail;
	while (c->tail < head) {
		size_t chunk = head - c->tail > CHUNK_RECORDS ? CHUNK_RECORDS : (size_t)(head - c->tail);

		k = read_records(r, slot, c, c->tail, chunk, now_ns);
		if (k < 0)
			return k;
		c->tail += chunk;
	}
	return 0;
}

/* Transitions in the order claimed; one not published yet holds back those after it. */
static void drain_transitions(SpanRingReader *r, uint64_t now_ns)
{
	SpanRingHeader *h = (SpanRingHeader *)r->base;
	uint32_t claimed = atomic_load_explicit(&h->transitions_claimed, memory_order_acquire);
	SpanLog *log = r->log;

	if (claimed > SPAN_RING_TRANSITIONS)
		claimed = SPAN_RING_TRANSITIONS;
	for (; r->transitions_read < claimed; r->transitions_read++) {
		SpanRingTransition *t = &h->transitions[r->transitions_read];
		uint64_t time;
		uint32_t state;

		if (atomic_load_explicit(&t->ready, memory_order_acquire) != r->transitions_read + 1)
			break;
		state = atomic_load_explicit(&t->state, memory_order_relaxed);
		if (state >= _RUN_STATE_MAX ||
		    !to_profd_time(r, atomic_load_explicit(&t->time_ns, memory_order_relaxed), now_ns,
				   &time) ||
		    (log->n_transitions > 0 && time < log->transitions[log->n_transitions - 1].time_ns)) {
			log->stats.transitions_invalid++;
			continue;
		}
		log->transitions[log->n_transitions++] = (SpanTransition){ .time_ns = time,
									   .state = state };
		log->stats.transitions++;
	}
}

static int drain(SpanRingReader *r, uint64_t now_ns, uint64_t budget)
{
	SpanRingHeader *h = (SpanRingHeader *)r->base;
	uint32_t claimed = atomic_load_explicit(&h->slots_claimed, memory_order_acquire);
	uint32_t refused = atomic_load_explicit(&h->slots_refused, memory_order_relaxed);
	uint32_t first = r->next_slot;
	int k;

	if (claimed > r->o.geometry.n_slots)
		claimed = r->o.geometry.n_slots;
	if (first >= claimed)
		first = 0;
	/* round robin from where the last drain stopped: every slot is reached under any load */
	for (uint32_t n = 0; n < claimed; n++) {
		uint32_t i = (first + n) % claimed;

		if (budget == 0) {
			r->next_slot = i;
			break;
		}
		k = drain_slot(r, i, now_ns, &budget);
		if (k < 0)
			return k;
	}
	drain_transitions(r, now_ns);
	r->log->stats.threads_without_slot = refused;
	return 0;
}

int span_ring_reader_drain(SpanRingReader *r, uint64_t now_ns)
{
	return drain(r, now_ns, r->o.drain_records ?: UINT64_MAX);
}

int span_ring_reader_drain_all(SpanRingReader *r, uint64_t now_ns)
{
	return drain(r, now_ns, UINT64_MAX);
}

const SpanLogStats *span_ring_reader_stats(const SpanRingReader *r)
{
	return &r->log->stats;
}

int span_ring_reader_take_log(SpanRingReader *r, SpanLog **ret)
{
	SpanLog *fresh = calloc(1, sizeof(*fresh));

	if (!fresh)
		return -ENOMEM;
	*ret = r->log;
	r->log = fresh;
	return 0;
}
