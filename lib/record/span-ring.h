/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The span ring of a live run: shared memory that profd creates (a sealed
 * memfd it hands to the program) and the program's stage spans write into, so
 * that per-span intervals (tid, stage, begin, end) and macro-state
 * transitions reach profd without a call per span.
 *
 * Layout, host byte order, times CLOCK_MONOTONIC of the program:
 *
 *   SpanRingHeader      geometry (written by profd, read by the program),
 *                       the slot and transition claims and the transitions
 *   SpanRingSlot x n    one per thread that ended a span: its tid, the count
 *                       of records it wrote (head) and a ring of records
 *
 * A thread claims a slot once (an atomic increment of slots_claimed; a thread
 * that finds none counts itself in slots_refused and records nothing), then
 * writes each record at head % slot_records and publishes it by storing head
 * + 1 with release order. A slow reader loses the oldest records, never the
 * newest. A transition is claimed the same way, written, and published by
 * storing its index + 1 in 'ready'.
 *
 * For profd everything here is hostile input: the program may write anything
 * anywhere in it at any time. profd trusts only its own copy of the geometry,
 * reads each record once into memory of its own, checks it there, and keeps
 * its own cursors (span-log.h in the engine).
 */

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "stage.h"

#define SPAN_RING_MAGIC UINT64_C(0x31676e697264666f) /* "ofdring1" */
#define SPAN_RING_VERSION 1
/* Transitions a run may report (a program goes through a handful of states). */
#define SPAN_RING_TRANSITIONS 64

typedef struct SpanRingRecord {
	uint64_t begin_ns;
	uint64_t end_ns;
	uint32_t stage; /* Stage */
	uint32_t reserved;
} SpanRingRecord;

typedef struct SpanRingTransition {
	_Atomic uint64_t time_ns;
	_Atomic uint32_t state; /* RunState */
	_Atomic uint32_t ready; /* index + 1 once time and state are written */
} SpanRingTransition;

typedef struct SpanRingHeader {
	uint64_t magic;
	uint32_t version;
	uint32_t n_slots;
	uint32_t slot_records; /* a power of two */
	uint32_t slot_offset;  /* of the first slot, from the start of the ring */
	uint32_t slot_size;    /* bytes of one slot, records included */
	uint32_t reserved;
	alignas(64) _Atomic uint32_t slots_claimed;
	_Atomic uint32_t slots_refused;
	_Atomic uint32_t transitions_claimed;
	alignas(64) SpanRingTransition transitions[SPAN_RING_TRANSITIONS];
} SpanRingHeader;

typedef struct SpanRingSlot {
	_Atomic uint32_t tid;
	uint32_t reserved;
	_Atomic uint64_t head; /* records written so far */
	alignas(64) SpanRingRecord records[];
} SpanRingSlot;

/* The geometry profd chose; the bytes a ring of it takes. */
typedef struct SpanRingGeometry {
	uint32_t n_slots;
	uint32_t slot_records;
} SpanRingGeometry;

/* 0 and the size of a ring of this geometry; -EINVAL when it is not one (records not a power of two, too big). */
int span_ring_geometry_size(const SpanRingGeometry *g, size_t *ret_size);
/* Write the header of a fresh ring of geometry 'g' into 'header'. */
void span_ring_header_init(SpanRingHeader *header, const SpanRingGeometry *g);
/* The slot 'i' of a ring starting at 'base' (no checks: the geometry is the caller's). */
static inline SpanRingSlot *span_ring_slot(void *base, uint32_t slot_offset, uint32_t slot_size,
					   uint32_t i)
{
	return (SpanRingSlot *)((char *)base + slot_offset + (size_t)slot_size * i);
}
