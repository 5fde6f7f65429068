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

int ring_drain(PerfRing *r, RingRecordFn fn, void *userdata, uint64_t *ret_bytes)
{
	uint64_t head, tail, start, mask = r->data_size - 1;
	int n = 0, k = 0;

	/* acquire: the records below head are fully written once we see head */
	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	tail = start = r->meta->data_tail;
	if (head - tail > r->data_size || tail % 8 != 0) {
		/* the kernel never produces this; corrupt metadata */
		k = -EBADMSG;
		tail = head;
	}

	while (k == 0 && tail != head) {
		uint64_t avail = head - tail, off = tail & mask;
		struct perf_event_header header;
		const struct perf_event_header *record;

		if (avail < sizeof(header)) {
			k = -EBADMSG;
			tail = head;
			break;
		}
		/* the header itself may straddle the end */
		if (off + sizeof(header) <= r->data_size)
			memcpy(&header, r->data + off, sizeof(header));
		else {
			size_t first = r->data_size - off;

			memcpy(&header, r->data + off, first);
			memcpy((uint8_t *)&header + first, r->data, sizeof(header) - first);
		}
		if (header.size < sizeof(header) || header.size > avail || header.size % 8 != 0) {
			k = -EBADMSG;
			tail = head;
			break;
		}

		if (off + header.size <= r->data_size)
			record = (const struct perf_event_header *)(r->data + off);
		else {
			size_t first = r->data_size - off;

			memcpy(r->bounce, r->data + off, first);
			memcpy(r->bounce + first, r->data, header.size - first);
			record = (const struct perf_event_header *)r->bounce;
		}

		tail += header.size;
		n++;
		k = fn(userdata, record, header.size);
	}

	/* release: the kernel may reuse the space only after we are done reading it */
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	if (ret_bytes)
		*ret_bytes = tail - start;
	return k < 0 ? k : n;
}
