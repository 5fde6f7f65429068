/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"

size_t ring_data_size_for(size_t min_bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = page;

	while (size < min_bytes)
		size *= 2;
	return size;
}

static int ring_alloc(PerfRing **ret)
{
	/* the bounce buffer makes this 64 KiB: allocate, never put it on a stack */
	PerfRing *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	*ret = r;
	return 0;
}

int ring_map(int fd, size_t data_size, PerfRing **ret)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	PerfRing *r;
	void *base;
	int k;

	if (data_size < page || (data_size & (data_size - 1)) != 0)
		return -EINVAL;
	k = ring_alloc(&r);
	if (k < 0)
		return k;
	/* writable, so the kernel honours data_tail and never overwrites unread records */
	base = mmap(NULL, page + data_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		k = negative_errno();
		free(r);
		return k;
	}
	r->meta = base;
	r->data = (uint8_t *)base + page;
	r->data_size = data_size;
	r->mmap_size = page + data_size;
	*ret = r;
	return 0;
}

int ring_wrap_memory(void *memory, uint64_t data_size, PerfRing **ret)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	PerfRing *r;
	int k;

	if (!memory || data_size == 0 || (data_size & (data_size - 1)) != 0)
		return -EINVAL;
	k = ring_alloc(&r);
	if (k < 0)
		return k;
	r->meta = memory;
	r->data = (uint8_t *)memory + page;
	r->data_size = data_size;
	*ret = r;
	return 0;
}

PerfRing *ring_free(PerfRing *r)
{
	if (!r)
		return NULL;
	if (r->mmap_size > 0)
		munmap(r->meta, r->mmap_size);
	free(r);
	return NULL;
}

uint64_t ring_pending(const PerfRing *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);

	return head - r->meta->data_tail;
}

/* Discard everything pending: a corrupt ring cannot be resynchronised. */
static int ring_discard(PerfRing *r)
{
	r->tail = r->head;
	r->peeked = 0;
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
	return -EBADMSG;
}

int ring_begin(PerfRing *r)
{
	/* acquire: the records below head are fully written once we see head */
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	r->tail = r->meta->data_tail;
	r->peeked = 0;
	/* the kernel never produces this; corrupt metadata */
	if (r->head - r->tail > r->data_size || r->tail % 8 != 0)
		return ring_discard(r);
	return 0;
}

int ring_peek(PerfRing *r, const struct perf_event_header **ret)
{
	uint64_t avail = r->head - r->tail, off = r->tail & (r->data_size - 1);
	struct perf_event_header header;

	if (avail == 0)
		return 0;
	if (avail < sizeof(header))
		return ring_discard(r);
	/* the header itself may straddle the end */
	if (off + sizeof(header) <= r->data_size)
		memcpy(&header, r->data + off, sizeof(header));
	else {
		size_t first = r->data_size - off;

		memcpy(&header, r->data + off, first);
		memcpy((uint8_t *)&header + first, r->data, sizeof(header) - first);
	}
	if (header.size < sizeof(header) || header.size > avail || header.size % 8 != 0)
		return ring_discard(r);
	if (off + header.size <= r->data_size)
		*ret = (const struct perf_event_header *)(r->data + off);
	else {
		size_t first = r->data_size - off;

		memcpy(r->bounce, r->data + off, first);
		memcpy(r->bounce + first, r->data, header.size - first);
		*ret = (const struct perf_event_header *)r->bounce;
	}
	r->peeked = header.size;
	return 1;
}

void ring_consume(PerfRing *r)
{
	r->tail += r->peeked;
	r->peeked = 0;
	/* release: the kernel may reuse the space only after we are done reading it */
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

int ring_drain(PerfRing *r, RingRecordFn fn, void *userdata, uint64_t *ret_bytes)
{
	const struct perf_event_header *record;
	uint64_t start = r->meta->data_tail;
	int n = 0, k;

	k = ring_begin(r);
	while (k == 0 && (k = ring_peek(r, &record)) > 0) {
		n++;
		k = fn(userdata, record, record->size);
		ring_consume(r);
	}
	if (ret_bytes)
		*ret_bytes = r->tail - start;
	return k < 0 ? k : n;
}
