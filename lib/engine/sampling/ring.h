/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A perf mmap ring: one metadata page and 2^n data pages the kernel writes
 * records into. ring_drain() hands each record to a callback in order; a
 * record that wraps around the end of the data area is copied into a bounce
 * buffer first, so callbacks always see it contiguous.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

typedef struct PerfRing {
	struct perf_event_mmap_page *meta;
	uint8_t *data;      /* data area: data_size bytes, a power of two */
	uint64_t data_size;
	size_t mmap_size;   /* 0 when the memory is not ours to unmap */
	uint64_t head, tail; /* of a read: written up to head (when it began), read up to tail */
	uint64_t peeked;     /* the size of the record ring_peek() showed, 0 when none */
	_Alignas(8) uint8_t bounce[UINT16_MAX + 1]; /* a record's size is a u16; records hold u64s */
} PerfRing;

/* The smallest data area (power-of-two pages) that holds 'min_bytes'. */
size_t ring_data_size_for(size_t min_bytes);

/* mmap 'data_size' bytes (a power-of-two multiple of the page size) of the event 'fd'. */
int ring_map(int fd, size_t data_size, PerfRing **ret);
/* A ring over memory the caller owns (tests, fuzzing): a metadata page then data_size bytes. */
int ring_wrap_memory(void *memory, uint64_t data_size, PerfRing **ret);
PerfRing *ring_free(PerfRing *r);

/* Bytes written by the kernel and not consumed yet. */
uint64_t ring_pending(const PerfRing *r);

/*
 * Return 0 to continue, a negative errno to stop the drain (the record is
 * consumed and the error returned).
 */
typedef int (*RingRecordFn)(void *userdata, const struct perf_event_header *header, size_t size);

/*
 * Hand every complete record to 'fn', then publish the new tail. A header
 * whose size is impossible (smaller than a header, larger than the unread
 * data, not a multiple of 8) is -EBADMSG: everything pending is discarded, since the ring cannot
 * be resynchronised. Returns the number of records or a negative errno;
 * 'ret_bytes' (optional) gets the bytes consumed.
 */
int ring_drain(PerfRing *r, RingRecordFn fn, void *userdata, uint64_t *ret_bytes);

/*
 * The same one record at a time, for merging several rings by time: a read
 * covers what was written when ring_begin() was called. ring_peek() shows the
 * next record (1), or says none is left (0); it stays valid until
 * ring_consume() hands its space back to the kernel. A corrupt ring is
 * -EBADMSG, everything pending discarded, as with ring_drain().
 */
int ring_begin(PerfRing *r);
int ring_peek(PerfRing *r, const struct perf_event_header **ret);
void ring_consume(PerfRing *r);
