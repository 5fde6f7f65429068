/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perf-record.h"

#include <errno.h>
#include <string.h>

#include "byte-reader.h"

/* The record's fields in order, every read bounds-checked (byte-reader.h). */
static int cursor_u64(ByteReader *c, uint64_t *ret)
{
	return BYTE_READER_GET(c, *ret) ? 0 : -EBADMSG;
}

static int cursor_u32_pair(ByteReader *c, uint32_t *a, uint32_t *b)
{
	uint32_t v[2];

	if (!BYTE_READER_GET(c, v))
		return -EBADMSG;
	*a = v[0];
	*b = v[1];
	return 0;
}

/* 'n' u64 words in place; returns a pointer into the record (records are 8-byte aligned). */
static int cursor_u64_array(ByteReader *c, uint64_t n, const uint64_t **ret)
{
	const uint64_t *words;

	if (n > SIZE_MAX / sizeof(uint64_t) || !(words = byte_reader_take(c, n * sizeof(uint64_t))))
		return -EBADMSG;
	*ret = words;
	return 0;
}

/* One u64 for each of 'fields' present in sample type t: fields we read past, not keep. */
static int cursor_skip_fields(ByteReader *c, uint64_t t, uint64_t fields)
{
	const uint64_t *skipped;

	return cursor_u64_array(c, (uint64_t)__builtin_popcountll(t & fields), &skipped);
}

static int cursor_bytes(ByteReader *c, uint64_t n, const uint8_t **ret)
{
	const uint8_t *bytes;

	if (n > SIZE_MAX || !(bytes = byte_reader_take(c, n)))
		return -EBADMSG;
	*ret = bytes;
	return 0;
}

/* A NUL-terminated string padded to 8 bytes, which ends where the sample_id trailer begins. */
static int cursor_string(ByteReader *c, size_t trailer, const char **ret)
{
	size_t before_trailer, len, padded;
	const uint8_t *nul;

	if (byte_reader_left(c) < trailer)
		return -EBADMSG;
	before_trailer = byte_reader_left(c) - trailer;
	nul = memchr(c->p, '\0', before_trailer);
	if (!nul)
		return -EBADMSG;
	len = (size_t)(nul - c->p) + 1;
	padded = (len + 7) & ~(size_t)7;
	if (padded > before_trailer)
		padded = before_trailer;
	*ret = byte_reader_take(c, padded);
	return 0;
}

uint64_t perf_record_sample_type(bool dwarf)
{
	uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;

	if (dwarf)
		t |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	return t;
}

/* Fields we never request are refused rather than skipped: their layouts vary. */
#define SUPPORTED_SAMPLE_TYPE                                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |           \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |            \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |                    \
	 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT)

/* The sample_id trailer fields after pid/tid and time; each one u64. */
#define SAMPLE_ID_SKIPPED \
	(PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static size_t sample_id_size(uint64_t t)
{
	/* pid/tid is two u32s: one u64 too */
	uint64_t fields = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | SAMPLE_ID_SKIPPED;

	return (size_t)__builtin_popcountll(t & fields) * sizeof(uint64_t);
}

static int parse_sample_id(const PerfRecordFormat *f, ByteReader *c, PerfRecordId *ret)
{
	uint64_t t = f->sample_type;
	int r = 0;

	if (t & PERF_SAMPLE_TID)
		r = cursor_u32_pair(c, &ret->pid, &ret->tid);
	if (r == 0 && (t & PERF_SAMPLE_TIME))
		r = cursor_u64(c, &ret->time);
	if (r == 0)
		r = cursor_skip_fields(c, t, SAMPLE_ID_SKIPPED);
	return r;
}

static int parse_sample(const PerfRecordFormat *f, ByteReader *c, uint16_t misc, PerfSample *s)
{
	uint64_t t = f->sample_type;
	int r;

	*s = (PerfSample){};
	s->kernel_mode = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;

	r = cursor_skip_fields(c, t, PERF_SAMPLE_IDENTIFIER);
	if (r == 0 && (t & PERF_SAMPLE_IP))
		r = cursor_u64(c, &s->ip);
	if (r == 0 && (t & PERF_SAMPLE_TID))
		r = cursor_u32_pair(c, &s->pid, &s->tid);
	/*
	 * -1 is the kernel's id of a task it released already while it still runs its
	 * exit (a thread reaps itself): the sample is its process's, as its main
	 * thread's, or of no process (0, as the idle task's) once the process is gone too
	 */
	if (r == 0 && s->pid == UINT32_MAX)
		s->pid = 0;
	if (r == 0 && s->tid == UINT32_MAX)
		s->tid = s->pid;
	if (r == 0 && (t & PERF_SAMPLE_TIME))
		r = cursor_u64(c, &s->time);
	if (r == 0 && (t & PERF_SAMPLE_ADDR))
		r = cursor_u64(c, &s->addr);
	if (r == 0)
		r = cursor_skip_fields(c, t, PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
						     PERF_SAMPLE_PERIOD);
	if (r == 0 && (t & PERF_SAMPLE_CALLCHAIN)) {
		r = cursor_u64(c, &s->n_callchain);
		if (r == 0)
			r = cursor_u64_array(c, s->n_callchain, &s->callchain);
	}
	if (r == 0 && (t & PERF_SAMPLE_REGS_USER)) {
		r = cursor_u64(c, &s->regs_abi);
		/* ABI_NONE (a kernel thread) means no registers follow */
		if (r == 0 && s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			s->regs_mask = f->sample_regs_user;
			s->n_regs = (uint32_t)__builtin_popcountll(s->regs_mask);
			r = cursor_u64_array(c, s->n_regs, &s->regs);
		}
	}
	if (r == 0 && (t & PERF_SAMPLE_STACK_USER)) {
		r = cursor_u64(c, &s->stack_size);
		/* size 0 (no user stack) carries neither data nor dyn_size */
		if (r == 0 && s->stack_size > 0) {
			r = cursor_bytes(c, s->stack_size, &s->stack);
			if (r == 0)
				r = cursor_u64(c, &s->stack_dyn_size);
			if (r == 0 && s->stack_dyn_size > s->stack_size)
				r = -EBADMSG;
		}
	}
	if (r == 0 && (t & PERF_SAMPLE_WEIGHT))
		r = cursor_u64(c, &s->weight);
	if (r < 0)
		*s = (PerfSample){};
	return r;
}

static int parse_mmap2(ByteReader *c, size_t trailer, uint16_t misc, PerfRecordMmap2 *m)
{
	const uint8_t *raw;
	int r;

	*m = (PerfRecordMmap2){};
	r = cursor_u32_pair(c, &m->pid, &m->tid);
	if (r == 0)
		r = cursor_u64(c, &m->addr);
	if (r == 0)
		r = cursor_u64(c, &m->len);
	if (r == 0)
		r = cursor_u64(c, &m->pgoff);
	/* 24 bytes: maj, min, ino, ino_generation -- or build_id_size, 3 pad, build_id[20] */
	if (r == 0)
		r = cursor_bytes(c, 24, &raw);
	if (r == 0 && (misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m->build_id_size = raw[0];
		m->build_id = raw + 4;
		if (m->build_id_size > 20)
			r = -EBADMSG;
	} else if (r == 0) {
		memcpy(&m->maj, raw, sizeof(uint32_t));
		memcpy(&m->min, raw + 4, sizeof(uint32_t));
		memcpy(&m->ino, raw + 8, sizeof(uint64_t));
	}
	if (r == 0)
		r = cursor_u32_pair(c, &m->prot, &m->flags);
	if (r == 0)
		r = cursor_string(c, trailer, &m->filename);
	return r;
}

int perf_record_parse(const PerfRecordFormat *format, const struct perf_event_header *header,
		      size_t size, PerfRecord *ret)
{
	size_t trailer = 0;
	PerfRecord rec = {};
	ByteReader c;
	int r = 0;

	if (!format || !header || !ret || size < sizeof(*header) || header->size != size)
		return -EBADMSG;
	/* the kernel keeps records 8-byte sized and aligned; arrays are used in place */
	if (size % 8 != 0 || (uintptr_t)header % 8 != 0)
		return -EBADMSG;
	if (format->sample_type & ~(uint64_t)SUPPORTED_SAMPLE_TYPE)
		return -EOPNOTSUPP;

	rec.type = header->type;
	rec.misc = header->misc;
	c = byte_reader(header + 1, size - sizeof(*header));
	if (format->sample_id_all && header->type != PERF_RECORD_SAMPLE)
		trailer = sample_id_size(format->sample_type);

	switch (header->type) {
	case PERF_RECORD_SAMPLE:
		r = parse_sample(format, &c, header->misc, &rec.sample);
		break;
	case PERF_RECORD_MMAP2:
		r = parse_mmap2(&c, trailer, header->misc, &rec.mmap2);
		break;
	case PERF_RECORD_COMM:
		r = cursor_u32_pair(&c, &rec.comm.pid, &rec.comm.tid);
		if (r == 0)
			r = cursor_string(&c, trailer, &rec.comm.comm);
		rec.comm.exec = header->misc & PERF_RECORD_MISC_COMM_EXEC;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		r = cursor_u32_pair(&c, &rec.task.pid, &rec.task.ppid);
		if (r == 0)
			r = cursor_u32_pair(&c, &rec.task.tid, &rec.task.ptid);
		if (r == 0)
			r = cursor_u64(&c, &rec.task.time);
		break;
	case PERF_RECORD_LOST:
		r = cursor_u64(&c, &rec.lost.id);
		if (r == 0)
			r = cursor_u64(&c, &rec.lost.lost);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		r = cursor_u64(&c, &rec.throttle.time);
		if (r == 0)
			r = cursor_u64(&c, &rec.throttle.id);
		if (r == 0)
			r = cursor_u64(&c, &rec.throttle.stream_id);
		break;
	default:
		/* not ours to understand; the caller skips it */
		*ret = rec;
		return 0;
	}

	/* the sample_id trailer sits at the end of the record */
	if (r == 0 && trailer > 0) {
		if (byte_reader_left(&c) < trailer)
			r = -EBADMSG;
		else {
			c.p = c.end - trailer;
			r = parse_sample_id(format, &c, &rec.id);
		}
	}
	if (r < 0)
		return r;
	*ret = rec;
	return 0;
}
