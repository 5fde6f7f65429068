/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The program's side of a span ring (span-ring.h): a thread claims a slot on
 * its first span and then writes each span's interval into it, no lock, no
 * system call; transitions go into the header.
 *
 * A writer stays allocated (on a list, so it stays reachable) once it was
 * published: a thread that loaded it just before the ring was detached may
 * still be writing through it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "span-ring-writer.h"
#include "span.h"

/* Large enough for any sane run, small enough that a ring never needs 64-bit offsets. */
#define SPAN_RING_MAX_BYTES ((size_t)1 << 30)

struct SpanRingWriter {
	SpanRingHeader *header;
	void *base;
	uint32_t n_slots, mask, slot_offset, slot_size;
	pid_t pid; /* the process that attached: a forked child must not write */
	SpanRingWriter *retired_next;
};

/* This thread's slot in the ring of 'writer' (NULL: none could be claimed). */
typedef struct ThreadRing {
	const SpanRingWriter *writer;
	SpanRingSlot *slot;
	uint64_t head;
} ThreadRing;

static _Thread_local ThreadRing thread_ring __attribute__((tls_model("initial-exec")));

static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static SpanRingWriter *retired;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

int span_ring_geometry_size(const SpanRingGeometry *g, size_t *ret_size)
{
	size_t slot_size, size;

	if (g->n_slots == 0 || g->slot_records == 0 ||
	    (g->slot_records & (g->slot_records - 1)) != 0)
		return -EINVAL;
	if (g->slot_records > SPAN_RING_MAX_BYTES / sizeof(SpanRingRecord))
		return -EINVAL;
	slot_size = sizeof(SpanRingSlot) + (size_t)g->slot_records * sizeof(SpanRingRecord);
	if (g->n_slots > (SPAN_RING_MAX_BYTES - sizeof(SpanRingHeader)) / slot_size)
		return -EINVAL;
	size = sizeof(SpanRingHeader) + (size_t)g->n_slots * slot_size;
	*ret_size = size;
	return 0;
}

void span_ring_header_init(SpanRingHeader *header, const SpanRingGeometry *g)
{
	memset(header, 0, sizeof(*header));
	header->magic = SPAN_RING_MAGIC;
	header->version = SPAN_RING_VERSION;
	header->n_slots = g->n_slots;
	header->slot_records = g->slot_records;
	header->slot_offset = sizeof(SpanRingHeader);
	header->slot_size = (uint32_t)(sizeof(SpanRingSlot) +
				       (size_t)g->slot_records * sizeof(SpanRingRecord));
}

/* A forked child is not the process profd samples: it must not write into the ring. */
static void forget_ring_in_child(void)
{
	atomic_store_explicit(&span_switches_.ring, NULL, memory_order_relaxed);
	thread_ring = (ThreadRing){};
}

static void register_atfork(void)
{
	(void)pthread_atfork(NULL, NULL, forget_ring_in_child);
}

int span_ring_writer_new(void *mem, size_t size, SpanRingWriter **ret)
{
	SpanRingHeader *h = mem;
	SpanRingGeometry g;
	size_t need;
	SpanRingWriter *w;

	/* profd made the ring, but a program must not crash on a ring that is not one */
	if (!mem || size < sizeof(SpanRingHeader) || h->magic != SPAN_RING_MAGIC ||
	    h->version != SPAN_RING_VERSION)
		return -EBADMSG;
	g = (SpanRingGeometry){ .n_slots = h->n_slots, .slot_records = h->slot_records };
	if (span_ring_geometry_size(&g, &need) < 0 || need > size ||
	    h->slot_offset != sizeof(SpanRingHeader) ||
	    h->slot_size != sizeof(SpanRingSlot) + (size_t)g.slot_records * sizeof(SpanRingRecord))
		return -EBADMSG;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (SpanRingWriter){
		.header = h,
		.base = mem,
		.n_slots = g.n_slots,
		.mask = g.slot_records - 1,
		.slot_offset = h->slot_offset,
		.slot_size = h->slot_size,
		.pid = getpid(),
	};
	(void)pthread_once(&atfork_once, register_atfork);
	*ret = w;
	return 0;
}

void span_ring_writer_publish(SpanRingWriter *w)
{
	atomic_store_explicit(&span_switches_.ring, w, memory_order_release);
}

void span_ring_writer_retire(SpanRingWriter *w)
{
	if (!w)
		return;
	if (atomic_load_explicit(&span_switches_.ring, memory_order_relaxed) == w)
		atomic_store_explicit(&span_switches_.ring, NULL, memory_order_release);
	pthread_mutex_lock(&retired_lock);
	w->retired_next = retired;
	retired = w;
	pthread_mutex_unlock(&retired_lock);
}

void span_ring_writer_put_transition(SpanRingWriter *w, int state, uint64_t time_ns)
{
	SpanRingTransition *t;
	uint32_t i;

	if (getpid() != w->pid)
		return;
	i = atomic_fetch_add_explicit(&w->header->transitions_claimed, 1, memory_order_relaxed);
	if (i >= SPAN_RING_TRANSITIONS)
		return;
	t = &w->header->transitions[i];
	atomic_store_explicit(&t->time_ns, time_ns, memory_order_relaxed);
	atomic_store_explicit(&t->state, (uint32_t)state, memory_order_relaxed);
	atomic_store_explicit(&t->ready, i + 1, memory_order_release);
}

/* First span of this thread in this ring: a slot of its own, or none when they are all taken. */
static __attribute__((noinline)) void claim_slot(const SpanRingWriter *w)
{
	SpanRingHeader *h = w->header;
	uint32_t i;

	thread_ring = (ThreadRing){ .writer = w };
	i = atomic_fetch_add_explicit(&h->slots_claimed, 1, memory_order_relaxed);
	if (i >= w->n_slots) {
		atomic_fetch_add_explicit(&h->slots_refused, 1, memory_order_relaxed);
		return;
	}
	thread_ring.slot = span_ring_slot(w->base, w->slot_offset, w->slot_size, i);
	/* head is still 0: profd reads no record of the slot before it knows whose it is */
	atomic_store_explicit(&thread_ring.slot->tid, (uint32_t)syscall(SYS_gettid),
			      memory_order_release);
}

void span_ring_put_(Stage stage, uint64_t begin_ns, uint64_t end_ns)
{
	const SpanRingWriter *w = atomic_load_explicit(&span_switches_.ring, memory_order_acquire);
	ThreadRing *t = &thread_ring;
	SpanRingRecord *rec;

	if (!w)
		return;
	if (_unlikely_(t->writer != w))
		claim_slot(w);
	if (!t->slot)
		return;
	rec = &t->slot->records[t->head & w->mask];
	rec->begin_ns = begin_ns;
	rec->end_ns = end_ns;
	rec->stage = (uint32_t)stage;
	atomic_store_explicit(&t->slot->head, ++t->head, memory_order_release);
}
