/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Parse the records a session's rings carry into plain structs. The layout
 * of a SAMPLE (and the sample_id trailer of other records) depends on the
 * event's sample_type, so the parser takes the format the events were opened
 * with. Every length is checked against the record size: a malformed record
 * is -EBADMSG, never a read outside it. Records must be 8-byte aligned and
 * sized, as the kernel writes them. Pointers in the result point into the
 * record.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf-sample.h"

typedef struct PerfRecordFormat {
	uint64_t sample_type;      /* PERF_SAMPLE_* bits of the events */
	uint64_t sample_regs_user; /* mask, with PERF_SAMPLE_REGS_USER */
	bool sample_id_all;
} PerfRecordFormat;

/* the sample_id trailer of non-sample records (the fields sample_type selects) */
typedef struct PerfRecordId {
	uint32_t pid, tid;
	uint64_t time;
} PerfRecordId;

typedef struct PerfRecordMmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;     /* 0 when the record carries a build-id instead */
	uint64_t ino;
	uint8_t build_id_size; /* > 0 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	const uint8_t *build_id;
	uint32_t prot, flags;
	const char *filename;  /* NUL-terminated within the record */
} PerfRecordMmap2;

typedef struct PerfRecordComm {
	uint32_t pid, tid;
	const char *comm;      /* NUL-terminated within the record */
	bool exec;             /* PERF_RECORD_MISC_COMM_EXEC */
} PerfRecordComm;

typedef struct PerfRecordTask { /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
} PerfRecordTask;

typedef struct PerfRecordLost {
	uint64_t id, lost;
} PerfRecordLost;

typedef struct PerfRecordThrottle { /* THROTTLE and UNTHROTTLE */
	uint64_t time, id, stream_id;
} PerfRecordThrottle;

typedef struct PerfRecord {
	uint32_t type;  /* PERF_RECORD_*; other types parse to just type and misc */
	uint16_t misc;
	PerfRecordId id; /* non-sample records with sample_id_all */
	union {
		PerfSample sample;
		PerfRecordMmap2 mmap2;
		PerfRecordComm comm;
		PerfRecordTask task;
		PerfRecordLost lost;
		PerfRecordThrottle throttle;
	};
} PerfRecord;

/* The sample_type a session uses in each mode; shared so parser and opener agree. */
uint64_t perf_record_sample_type(bool dwarf);

int perf_record_parse(const PerfRecordFormat *format, const struct perf_event_header *header,
		      size_t size, PerfRecord *ret);
