/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "perf-synth.h"

#include <errno.h>
#include <string.h>

/* Appends to a record being built; every write stays within PerfSynthRecord. */
typedef struct Writer {
	uint8_t *p;
	size_t left;
} Writer;

static int put(Writer *w, const void *data, size_t n)
{
	if (n > w->left)
		return -ENAMETOOLONG;
	memcpy(w->p, data, n);
	w->p += n;
	w->left -= n;
	return 0;
}

static int put_u64(Writer *w, uint64_t v)
{
	return put(w, &v, sizeof(v));
}

static int put_u32_pair(Writer *w, uint32_t a, uint32_t b)
{
	uint32_t v[2] = { a, b };

	return put(w, v, sizeof(v));
}

/* A NUL-terminated string, padded with NULs to 8 bytes, as the kernel writes names. */
static int put_string(Writer *w, const char *s, size_t max)
{
	size_t len = strnlen(s, max);
	size_t padded = (len + 1 + 7) & ~(size_t)7;
	int r;

	if (padded > w->left)
		return -ENAMETOOLONG;
	r = put(w, s, len);
	if (r == 0) {
		memset(w->p, 0, padded - len);
		w->p += padded - len;
		w->left -= padded - len;
	}
	return r;
}

/* The sample_id trailer in sample_type order: pid/tid, time, then fields we leave zero. */
static int put_sample_id(Writer *w, const PerfRecordFormat *f, uint32_t pid, uint32_t tid,
			 uint64_t time)
{
	uint64_t t = f->sample_type;
	int r = 0;

	if (!f->sample_id_all)
		return 0;
	if (t & PERF_SAMPLE_TID)
		r = put_u32_pair(w, pid, tid);
	if (r == 0 && (t & PERF_SAMPLE_TIME))
		r = put_u64(w, time);
	for (uint64_t bit = PERF_SAMPLE_ID; r == 0 && bit <= PERF_SAMPLE_IDENTIFIER; bit <<= 1)
		if (t & bit & (PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_IDENTIFIER))
			r = put_u64(w, 0);
	return r;
}

static Writer writer_begin(PerfSynthRecord *rec, uint32_t type, uint16_t misc)
{
	memset(rec, 0, sizeof(rec->header));
	rec->header.type = type;
	rec->header.misc = misc;
	return (Writer){ .p = (uint8_t *)(&rec->header + 1),
			 .left = sizeof(*rec) - sizeof(rec->header) };
}

static void writer_end(PerfSynthRecord *rec, const Writer *w)
{
	rec->header.size = (uint16_t)(w->p - (const uint8_t *)rec);
}

int perf_synth_mmap2(const PerfRecordFormat *format, uint32_t pid, const ProcessMapping *m,
		     uint64_t time, PerfSynthRecord *ret)
{
	Writer w = writer_begin(ret, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	uint32_t flags = 0;
	int r;

	/* a path the kernel never writes: refused, never cut */
	if (m->path && strlen(m->path) >= 4096)
		return -ENAMETOOLONG;
	r = put_u32_pair(&w, pid, pid);
	if (r == 0)
		r = put_u64(&w, m->start);
	if (r == 0)
		r = put_u64(&w, m->end - m->start);
	if (r == 0)
		r = put_u64(&w, m->pgoff);
	if (r == 0)
		r = put_u32_pair(&w, m->dev_major, m->dev_minor);
	if (r == 0)
		r = put_u64(&w, m->inode);
	if (r == 0)
		r = put_u64(&w, 0); /* ino_generation */
	if (r == 0)
		r = put_u32_pair(&w, m->prot, flags);
	if (r == 0)
		r = put_string(&w, m->path ?: "", 4096);
	if (r == 0)
		r = put_sample_id(&w, format, pid, pid, time);
	if (r < 0)
		return r;
	writer_end(ret, &w);
	return 0;
}

int perf_synth_comm(const PerfRecordFormat *format, uint32_t pid, uint32_t tid, const char *comm,
		    uint64_t time, PerfSynthRecord *ret)
{
	Writer w = writer_begin(ret, PERF_RECORD_COMM, PERF_RECORD_MISC_USER);
	int r;

	r = put_u32_pair(&w, pid, tid);
	if (r == 0)
		r = put_string(&w, comm, 15);
	if (r == 0)
		r = put_sample_id(&w, format, pid, tid, time);
	if (r < 0)
		return r;
	writer_end(ret, &w);
	return 0;
}

/* The fields perf_synth_sample() writes; an aggregated sample needs no others. */
#define SYNTH_SAMPLE_TYPE                                                                        \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |                 \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_WEIGHT)

int perf_synth_sample(const PerfRecordFormat *format, const PerfSample *s, PerfSynthRecord *ret)
{
	uint64_t t = format->sample_type;
	Writer w = writer_begin(ret, PERF_RECORD_SAMPLE,
				s->kernel_mode ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	int r = 0;

	if (t & ~(uint64_t)SYNTH_SAMPLE_TYPE)
		return -EOPNOTSUPP;
	if (t & PERF_SAMPLE_IP)
		r = put_u64(&w, s->ip);
	if (r == 0 && (t & PERF_SAMPLE_TID))
		r = put_u32_pair(&w, s->pid, s->tid);
	if (r == 0 && (t & PERF_SAMPLE_TIME))
		r = put_u64(&w, s->time);
	if (r == 0 && (t & PERF_SAMPLE_ADDR))
		r = put_u64(&w, s->addr);
	if (r == 0 && (t & PERF_SAMPLE_CALLCHAIN)) {
		r = put_u64(&w, s->n_callchain);
		if (r == 0 && s->n_callchain > w.left / sizeof(uint64_t))
			r = -E2BIG;
		if (r == 0)
			r = put(&w, s->callchain, s->n_callchain * sizeof(uint64_t));
	}
	if (r == 0 && (t & PERF_SAMPLE_WEIGHT))
		r = put_u64(&w, s->weight);
	if (r < 0)
		return r == -ENAMETOOLONG ? -E2BIG : r;
	writer_end(ret, &w);
	return 0;
}
