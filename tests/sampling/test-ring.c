/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring reader over synthesised ring memory: records in order, records
 * wrapping the end of the data area (read whole through the bounce buffer),
 * the tail published, and impossible sizes refused without reading outside.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "perf-record.h"
#include "ring.h"
#include "test-util.h"

#define DATA_SIZE 4096U

typedef struct Fixture {
	uint8_t *memory; /* metadata page + data */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	PerfRing *ring;
} Fixture;

static void fixture_init(Fixture *f)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	f->memory = aligned_alloc(page, page + DATA_SIZE);
	memset(f->memory, 0, page + DATA_SIZE);
	f->meta = (struct perf_event_mmap_page *)f->memory;
	f->data = f->memory + page;
	if (ring_wrap_memory(f->memory, DATA_SIZE, &f->ring) < 0)
		abort();
}

static void fixture_done(Fixture *f)
{
	ring_free(f->ring);
	free(f->memory);
}

/* Write 'n' bytes at ring position 'pos' as the kernel would, wrapping at the end. */
static void ring_write(Fixture *f, uint64_t pos, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f->data[(pos + i) % DATA_SIZE] = ((const uint8_t *)p)[i];
}

/* A record of 'size' bytes whose payload words all hold 'tag'. */
static uint64_t put_record(Fixture *f, uint64_t pos, uint16_t size, uint64_t tag)
{
	struct perf_event_header h = { .type = 1000, .size = size };

	ring_write(f, pos, &h, sizeof(h));
	for (size_t off = sizeof(h); off + 8 <= size; off += 8)
		ring_write(f, pos + off, &tag, sizeof(tag));
	return pos + size;
}

typedef struct Seen {
	uint64_t tags[64];
	uint16_t sizes[64];
	size_t n;
	bool payload_ok;
	int fail_at; /* fail once more than this many records were seen (-1: never) */
} Seen;

static int on_record(void *userdata, const struct perf_event_header *h, size_t size)
{
	Seen *seen = userdata;
	uint64_t tag = 0;

	if (size >= 16)
		memcpy(&tag, (const uint8_t *)h + 8, sizeof(tag));
	/* the whole record must be contiguous and intact, wrapped or not */
	for (size_t off = 8; off + 8 <= size; off += 8) {
		uint64_t w;

		memcpy(&w, (const uint8_t *)h + off, sizeof(w));
		if (w != tag)
			seen->payload_ok = false;
	}
	if (seen->n < 64) {
		seen->tags[seen->n] = tag;
		seen->sizes[seen->n] = (uint16_t)size;
	}
	seen->n++;
	if (seen->fail_at >= 0 && seen->n > (size_t)seen->fail_at)
		return -ECANCELED;
	return 0;
}

static void test_in_order(void)
{
	Fixture f;
	Seen seen = { .payload_ok = true, .fail_at = -1 };
	uint64_t pos = 0, bytes = 0;
	int r;

	fixture_init(&f);
	for (uint64_t i = 0; i < 5; i++)
		pos = put_record(&f, pos, (uint16_t)(16 + 8 * i), i + 1);
	f.meta->data_head = pos;
	r = ring_drain(f.ring, on_record, &seen, &bytes);
	CHECK(r == 5, "drained %d records", r);
	CHECK(seen.n == 5 && seen.tags[0] == 1 && seen.tags[4] == 5 && seen.sizes[4] == 48,
	      "order: n %zu", seen.n);
	CHECK(seen.payload_ok, "payload damaged");
	CHECK(f.meta->data_tail == pos && bytes == pos, "tail %llu bytes %llu, wanted %llu",
	      (unsigned long long)f.meta->data_tail, (unsigned long long)bytes,
	      (unsigned long long)pos);
	CHECK(ring_pending(f.ring) == 0, "pending after drain");
	/* nothing new: nothing handed out */
	CHECK(ring_drain(f.ring, on_record, &seen, NULL) == 0 && seen.n == 5, "second drain");
	fixture_done(&f);
}

static void test_wrapped(void)
{
	/* start near the end, so records cross it; positions keep growing past DATA_SIZE */
	for (uint64_t start = DATA_SIZE - 64; start < DATA_SIZE; start += 8) {
		Fixture f;
		Seen seen = { .payload_ok = true, .fail_at = -1 };
		uint64_t pos = start + 7 * (uint64_t)DATA_SIZE; /* as after many laps */
		int r;

		fixture_init(&f);
		f.meta->data_tail = pos;
		pos = put_record(&f, pos, 48, 0xa1);
		pos = put_record(&f, pos, 200, 0xb2); /* crosses the end */
		pos = put_record(&f, pos, 24, 0xc3);
		f.meta->data_head = pos;
		r = ring_drain(f.ring, on_record, &seen, NULL);
		CHECK(r == 3 && seen.tags[0] == 0xa1 && seen.tags[1] == 0xb2 && seen.tags[2] == 0xc3 &&
			      seen.sizes[1] == 200,
		      "start %llu: r %d n %zu", (unsigned long long)start, r, seen.n);
		CHECK(seen.payload_ok, "start %llu: wrapped payload damaged", (unsigned long long)start);
		CHECK(f.meta->data_tail == pos, "tail not published");
		fixture_done(&f);
	}
}

/* A real SAMPLE record wrapped across the end parses from the bounce buffer. */
typedef struct ParseSeen {
	PerfRecordFormat format;
	int parsed;
	uint64_t ip, nr, last_ip;
} ParseSeen;

static int on_parse(void *userdata, const struct perf_event_header *h, size_t size)
{
	ParseSeen *p = userdata;
	PerfRecord rec;
	int r;

	r = perf_record_parse(&p->format, h, size, &rec);
	if (r < 0)
		return r;
	p->parsed++;
	p->ip = rec.sample.ip;
	p->nr = rec.sample.n_callchain;
	p->last_ip = rec.sample.n_callchain ? rec.sample.callchain[rec.sample.n_callchain - 1] : 0;
	return 0;
}

static void test_wrapped_sample(void)
{
	Fixture f;
	ParseSeen p = { .format = { .sample_type = perf_record_sample_type(false) } };
	uint64_t rec[3 + 1 + 1 + 1 + 20], pos = DATA_SIZE - 40;
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(rec) };
	int r;

	memcpy(&rec[0], &h, sizeof(h));
	rec[1] = 0x400123;                 /* ip */
	rec[2] = (uint64_t)7 << 32 | 7;    /* pid, tid */
	rec[3] = 99;                       /* time */
	rec[4] = 21;                       /* callchain nr */
	rec[5] = (uint64_t)PERF_CONTEXT_USER;
	for (int i = 0; i < 20; i++)
		rec[6 + i] = 0x400000 + (uint64_t)i;

	fixture_init(&f);
	f.meta->data_tail = pos;
	ring_write(&f, pos, rec, sizeof(rec));
	f.meta->data_head = pos + sizeof(rec);
	r = ring_drain(f.ring, on_parse, &p, NULL);
	CHECK(r == 1 && p.parsed == 1, "r %d parsed %d", r, p.parsed);
	CHECK(p.ip == 0x400123 && p.nr == 21 && p.last_ip == 0x400013, "ip %llx nr %llu last %llx",
	      (unsigned long long)p.ip, (unsigned long long)p.nr, (unsigned long long)p.last_ip);
	fixture_done(&f);
}

static void test_malformed(void)
{
	static const struct {
		const char *what;
		uint16_t size;
	} bad[] = {
		{ "size 0", 0 },
		{ "size below a header", 4 },
		{ "size past head", 4000 },
		{ "size not a multiple of 8", 20 },
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		Fixture f;
		Seen seen = { .payload_ok = true, .fail_at = -1 };
		struct perf_event_header h = { .type = 1000, .size = bad[i].size };
		uint64_t pos;
		int r;

		fixture_init(&f);
		pos = put_record(&f, 0, 16, 1);
		ring_write(&f, pos, &h, sizeof(h));
		f.meta->data_head = pos + 64;
		r = ring_drain(f.ring, on_record, &seen, NULL);
		CHECK(r == -EBADMSG, "%s: r %d", bad[i].what, r);
		CHECK(seen.n == 1, "%s: %zu records before the bad one", bad[i].what, seen.n);
		/* unrecoverable: everything pending is dropped, so the next drain starts clean */
		CHECK(f.meta->data_tail == f.meta->data_head, "%s: tail not advanced", bad[i].what);
		fixture_done(&f);
	}

	/* a head more than a ring ahead, an unaligned tail */
	{
		Fixture f;
		Seen seen = { .payload_ok = true, .fail_at = -1 };

		fixture_init(&f);
		f.meta->data_head = DATA_SIZE + 8;
		CHECK(ring_drain(f.ring, on_record, &seen, NULL) == -EBADMSG && seen.n == 0,
		      "head too far ahead");
		f.meta->data_tail = 4;
		f.meta->data_head = 64;
		CHECK(ring_drain(f.ring, on_record, &seen, NULL) == -EBADMSG && seen.n == 0,
		      "unaligned tail");
		/* a header cut short by head */
		f.meta->data_tail = 0;
		f.meta->data_head = 4;
		CHECK(ring_drain(f.ring, on_record, &seen, NULL) == -EBADMSG, "partial header");
		fixture_done(&f);
	}
}

static void test_callback_error(void)
{
	Fixture f;
	Seen seen = { .payload_ok = true, .fail_at = 1 }; /* fail on the second record */
	uint64_t pos = 0, after_second;
	int r;

	fixture_init(&f);
	pos = put_record(&f, pos, 16, 1);
	after_second = pos = put_record(&f, pos, 16, 2);
	pos = put_record(&f, pos, 16, 3);
	f.meta->data_head = pos;
	r = ring_drain(f.ring, on_record, &seen, NULL);
	CHECK(r == -ECANCELED && seen.n == 2, "r %d n %zu", r, seen.n);
	/* the failing record counts as consumed; the rest stays for the next drain */
	CHECK(f.meta->data_tail == after_second, "tail %llu", (unsigned long long)f.meta->data_tail);
	seen.fail_at = -1;
	CHECK(ring_drain(f.ring, on_record, &seen, NULL) == 1 && seen.tags[2] == 3, "resume");
	fixture_done(&f);
}

static void test_sizes(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	PerfRing *r = NULL;

	CHECK(ring_data_size_for(1) == page, "1 byte");
	CHECK(ring_data_size_for(page + 1) == 2 * page, "page + 1");
	CHECK(ring_data_size_for(8 * 17 * 1024) == 256 * 1024 || page > 32768, "8 DWARF samples");
	CHECK(ring_wrap_memory(&r, 3000, &r) == -EINVAL, "non power of two accepted");
}

int main(void)
{
	test_in_order();
	test_wrapped();
	test_wrapped_sample();
	test_malformed();
	test_callback_error();
	test_sizes();
	return test_result();
}
