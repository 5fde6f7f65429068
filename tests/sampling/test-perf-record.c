/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The record parser: well-formed records of every kind we read, and the
 * malformed ones (truncated at every length, impossible counts and sizes,
 * unterminated strings) refused with -EBADMSG.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "perf-record.h"
#include "perf-synth.h"
#include "test-util.h"

/* A record under construction, 8-byte aligned like the kernel's. */
typedef struct Builder {
	uint64_t words[4096];
	size_t bytes;
} Builder;

static void put(Builder *b, const void *p, size_t n)
{
	memcpy((uint8_t *)b->words + b->bytes, p, n);
	b->bytes += n;
}

static void put_u64(Builder *b, uint64_t v)
{
	put(b, &v, sizeof(v));
}

static void put_u32x2(Builder *b, uint32_t x, uint32_t y)
{
	uint32_t v[2] = { x, y };

	put(b, v, sizeof(v));
}

static void put_string(Builder *b, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + 7) & ~(size_t)7;
	uint8_t zero[8] = {};

	put(b, s, n);
	put(b, zero, padded - n);
}

static void begin(Builder *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	b->bytes = 0;
	put(b, &h, sizeof(h));
}

static struct perf_event_header *finish(Builder *b)
{
	struct perf_event_header *h = (struct perf_event_header *)b->words;

	h->size = (uint16_t)b->bytes;
	return h;
}

static const PerfRecordFormat dwarf_format = {
	.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
		       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	.sample_regs_user = 0x7, /* three registers keep the fixture small */
	.sample_id_all = true,
};

static struct perf_event_header *build_sample(Builder *b)
{
	uint8_t stack[64];

	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)i;
	begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put_u64(b, 0x401000);           /* ip */
	put_u32x2(b, 100, 101);         /* pid, tid */
	put_u64(b, 123456789);          /* time */
	put_u64(b, 3);                  /* callchain nr */
	put_u64(b, (uint64_t)PERF_CONTEXT_USER);
	put_u64(b, 0x401000);
	put_u64(b, 0x402000);
	put_u64(b, PERF_SAMPLE_REGS_ABI_64);
	put_u64(b, 11);
	put_u64(b, 22);
	put_u64(b, 33);
	put_u64(b, sizeof(stack));      /* stack size */
	put(b, stack, sizeof(stack));
	put_u64(b, 48);                 /* dyn_size */
	return finish(b);
}

/* Every prefix of a valid record, claimed whole, must be refused without reading past it. */
static void check_truncations(const PerfRecordFormat *f, const Builder *full, const char *what)
{
	for (size_t len = 8; len < full->bytes; len += 8) {
		/* a fresh heap copy of exactly 'len' bytes lets ASan see any overread */
		struct perf_event_header *h = malloc(len);
		PerfRecord rec;
		int r;

		memcpy(h, full->words, len);
		h->size = (uint16_t)len;
		r = perf_record_parse(f, h, len, &rec);
		/* some prefixes are themselves well-formed (a shorter filename), never beyond */
		CHECK(r == -EBADMSG || r == 0, "%s truncated to %zu: %d", what, len, r);
		free(h);
	}
}

static void test_sample(void)
{
	static Builder b;
	struct perf_event_header *h = build_sample(&b);
	PerfRecord rec;
	uint64_t v;
	int r;

	r = perf_record_parse(&dwarf_format, h, h->size, &rec);
	CHECK(r == 0, "parse: %d", r);
	CHECK(rec.type == PERF_RECORD_SAMPLE, "type %u", rec.type);
	CHECK(rec.sample.ip == 0x401000 && rec.sample.pid == 100 && rec.sample.tid == 101 &&
		      rec.sample.time == 123456789 && !rec.sample.kernel_mode,
	      "ip %llx pid %u tid %u", (unsigned long long)rec.sample.ip, rec.sample.pid,
	      rec.sample.tid);
	CHECK(rec.sample.n_callchain == 3 && rec.sample.callchain[2] == 0x402000, "callchain");
	CHECK(rec.sample.n_regs == 3 && rec.sample.regs[1] == 22, "regs");
	CHECK(perf_sample_get_reg(&rec.sample, 2, &v) == 0 && v == 33, "reg 2");
	CHECK(perf_sample_get_reg(&rec.sample, 5, &v) == -ENOENT, "reg 5 not copied");
	CHECK(rec.sample.stack_size == 64 && rec.sample.stack_dyn_size == 48 &&
		      rec.sample.stack[63] == 63, "stack");

	/* truncated anywhere */
	check_truncations(&dwarf_format, &b, "sample");
	for (size_t len = 8; len < b.bytes; len += 8) {
		PerfRecord x;

		h->size = (uint16_t)len;
		CHECK(perf_record_parse(&dwarf_format, h, len, &x) == -EBADMSG,
		      "sample truncated to %zu accepted", len);
	}
	h->size = (uint16_t)b.bytes;

	/* size disagreeing with the header, misaligned size */
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes - 8, &rec) == -EBADMSG, "size mismatch");
	h->size = (uint16_t)(b.bytes - 4);
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes - 4, &rec) == -EBADMSG, "unaligned size");
	h->size = (uint16_t)b.bytes;

	/* a callchain count that runs past the record, including one that overflows a multiply */
	b.words[4] = 1000;
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes, &rec) == -EBADMSG, "huge callchain nr");
	b.words[4] = UINT64_MAX / 4;
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes, &rec) == -EBADMSG, "overflowing nr");
	b.words[4] = 3;

	/* stack size past the end, dyn_size above size */
	b.words[12] = 1 << 20;
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes, &rec) == -EBADMSG, "huge stack size");
	b.words[12] = UINT64_MAX;
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes, &rec) == -EBADMSG, "stack size -1");
	b.words[12] = 64;
	b.words[b.bytes / 8 - 1] = 65;
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes, &rec) == -EBADMSG, "dyn_size > size");
	b.words[b.bytes / 8 - 1] = 48;
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes, &rec) == 0, "restored");

	/* tid -1: a thread released while it exits, taken as its process's; both -1: none */
	b.words[2] = 0xffffffff00000064ULL; /* pid 100, tid -1 */
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes, &rec) == 0 && rec.sample.pid == 100 &&
		      rec.sample.tid == 100, "released thread: pid %u tid %u", rec.sample.pid,
	      rec.sample.tid);
	b.words[2] = UINT64_MAX;
	CHECK(perf_record_parse(&dwarf_format, h, b.bytes, &rec) == 0 && rec.sample.pid == 0 &&
		      rec.sample.tid == 0, "released process: pid %u tid %u", rec.sample.pid,
	      rec.sample.tid);
}

static void test_sample_without_user_state(void)
{
	static Builder b;
	struct perf_event_header *h;
	PerfRecord rec;

	/* a kernel thread: ABI_NONE and no stack, so neither registers nor dyn_size follow */
	begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	put_u64(&b, 0xffffffff81000000ULL);
	put_u32x2(&b, 0, 7);
	put_u64(&b, 5);
	put_u64(&b, 2);
	put_u64(&b, (uint64_t)PERF_CONTEXT_KERNEL);
	put_u64(&b, 0xffffffff81000000ULL);
	put_u64(&b, PERF_SAMPLE_REGS_ABI_NONE);
	put_u64(&b, 0);
	h = finish(&b);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == 0, "kernel-only sample");
	CHECK(rec.sample.kernel_mode && rec.sample.n_regs == 0 && rec.sample.stack_size == 0 &&
		      !rec.sample.stack, "kernel sample fields");
	check_truncations(&dwarf_format, &b, "kernel sample");
}

static void put_sample_id(Builder *b, uint32_t pid, uint32_t tid, uint64_t time)
{
	put_u32x2(b, pid, tid);
	put_u64(b, time);
}

static void test_side_records(void)
{
	static Builder b;
	struct perf_event_header *h;
	PerfRecord rec;
	int r;

	begin(&b, PERF_RECORD_MMAP2, 0);
	put_u32x2(&b, 100, 100);
	put_u64(&b, 0x7f0000000000ULL);
	put_u64(&b, 0x2000);
	put_u64(&b, 0x1000);
	put_u32x2(&b, 8, 1);            /* maj, min */
	put_u64(&b, 4242);              /* ino */
	put_u64(&b, 0);                 /* ino_generation */
	put_u32x2(&b, 5, 2);            /* prot, flags */
	put_string(&b, "/usr/lib/libfoo.so");
	put_sample_id(&b, 100, 100, 77);
	h = finish(&b);
	r = perf_record_parse(&dwarf_format, h, h->size, &rec);
	CHECK(r == 0, "mmap2: %d", r);
	CHECK(rec.mmap2.addr == 0x7f0000000000ULL && rec.mmap2.len == 0x2000 &&
		      rec.mmap2.pgoff == 0x1000 && rec.mmap2.maj == 8 && rec.mmap2.ino == 4242 &&
		      rec.mmap2.prot == 5 && strcmp(rec.mmap2.filename, "/usr/lib/libfoo.so") == 0,
	      "mmap2 fields");
	CHECK(rec.id.pid == 100 && rec.id.time == 77, "sample_id trailer: pid %u time %llu",
	      rec.id.pid, (unsigned long long)rec.id.time);
	check_truncations(&dwarf_format, &b, "mmap2");

	/* filename without its NUL: every byte before the trailer is non-zero */
	memset((uint8_t *)b.words + 72, 'x', b.bytes - 72 - 16);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == -EBADMSG, "unterminated name");

	/* build-id variant with an impossible build-id size */
	begin(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
	put_u32x2(&b, 1, 1);
	put_u64(&b, 0x1000);
	put_u64(&b, 0x1000);
	put_u64(&b, 0);
	put_u32x2(&b, 21, 0);
	put_u64(&b, 0);
	put_u64(&b, 0);
	put_u32x2(&b, 5, 2);
	put_string(&b, "/x");
	put_sample_id(&b, 1, 1, 1);
	h = finish(&b);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == -EBADMSG, "build-id size 21");
	b.words[5] = 20;
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == 0 && rec.mmap2.build_id_size == 20,
	      "build-id size 20");

	begin(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put_u32x2(&b, 100, 102);
	put_string(&b, "worker-1");
	put_sample_id(&b, 100, 102, 9);
	h = finish(&b);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == 0 && rec.comm.tid == 102 &&
		      rec.comm.exec && strcmp(rec.comm.comm, "worker-1") == 0, "comm");
	check_truncations(&dwarf_format, &b, "comm");

	begin(&b, PERF_RECORD_FORK, 0);
	put_u32x2(&b, 100, 100);
	put_u32x2(&b, 103, 100);
	put_u64(&b, 55);
	put_sample_id(&b, 100, 103, 55);
	h = finish(&b);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == 0 && rec.task.tid == 103 &&
		      rec.task.ptid == 100 && rec.task.time == 55, "fork");
	check_truncations(&dwarf_format, &b, "fork");
	for (size_t len = 8; len < b.bytes; len += 8) {
		h->size = (uint16_t)len;
		CHECK(perf_record_parse(&dwarf_format, h, len, &rec) == -EBADMSG, "fork at %zu", len);
	}

	begin(&b, PERF_RECORD_LOST, 0);
	put_u64(&b, 1);
	put_u64(&b, 17);
	put_sample_id(&b, 100, 100, 3);
	h = finish(&b);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == 0 && rec.lost.lost == 17, "lost");

	begin(&b, PERF_RECORD_THROTTLE, 0);
	put_u64(&b, 1000);
	put_u64(&b, 1);
	put_u64(&b, 1);
	put_sample_id(&b, 100, 100, 1000);
	h = finish(&b);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == 0 &&
		      rec.throttle.time == 1000, "throttle");

	/* a type we do not know: only type and misc, and no error */
	begin(&b, 1000, 3);
	put_u64(&b, 1);
	h = finish(&b);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == 0 && rec.type == 1000 &&
		      rec.misc == 3, "unknown type");

	/* a header alone, too short for its type */
	begin(&b, PERF_RECORD_LOST, 0);
	h = finish(&b);
	CHECK(perf_record_parse(&dwarf_format, h, h->size, &rec) == -EBADMSG, "bare header");
}

/* An aggregated sample (bpf): made by perf_synth_sample(), read back field for field. */
static void test_aggregated_sample(void)
{
	static const PerfRecordFormat f = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_WEIGHT,
		.sample_id_all = true,
	};
	static const uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
					  (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x402000 };
	const PerfSample in = { .pid = 100, .tid = 101, .time = 77, .ip = chain[1], .kernel_mode = true,
				.n_callchain = ELEMENTSOF(chain), .callchain = chain,
				.weight = 4242, .addr = 3 };
	static PerfSynthRecord synth;
	static Builder b;
	struct perf_event_header *h;
	PerfRecord rec;
	int r;

	r = perf_synth_sample(&f, &in, &synth);
	CHECK(r == 0, "synth: %d", r);
	r = perf_record_parse(&f, &synth.header, synth.header.size, &rec);
	CHECK(r == 0 && rec.type == PERF_RECORD_SAMPLE, "parse: %d", r);
	CHECK(rec.sample.pid == 100 && rec.sample.tid == 101 && rec.sample.time == 77 &&
		      rec.sample.ip == chain[1] && rec.sample.kernel_mode, "ids, time, ip, mode");
	CHECK(rec.sample.weight == 4242 && rec.sample.addr == 3, "weight %llu addr %llu",
	      (unsigned long long)rec.sample.weight, (unsigned long long)rec.sample.addr);
	CHECK(rec.sample.n_callchain == ELEMENTSOF(chain) &&
		      memcmp(rec.sample.callchain, chain, sizeof(chain)) == 0, "callchain");
	memcpy(b.words, &synth, synth.header.size);
	b.bytes = synth.header.size;
	check_truncations(&f, &b, "aggregated sample");

	/* an ordinary sample has neither: weight 0 is one sample */
	h = build_sample(&b);
	r = perf_record_parse(&dwarf_format, h, h->size, &rec);
	CHECK(r == 0 && rec.sample.weight == 0 && rec.sample.addr == 0, "perf sample: %d", r);
	/* only the fields it knows how to write */
	CHECK(perf_synth_sample(&dwarf_format, &in, &synth) == -EOPNOTSUPP, "dwarf format synthesized");
}

static void test_format(void)
{
	static Builder b;
	PerfRecordFormat f = dwarf_format;
	struct perf_event_header *h = build_sample(&b);
	PerfRecord rec;

	/* a sample_type we never request, with a layout we do not parse */
	f.sample_type |= PERF_SAMPLE_RAW;
	CHECK(perf_record_parse(&f, h, h->size, &rec) == -EOPNOTSUPP, "RAW accepted");
	/* misaligned record memory */
	CHECK(perf_record_parse(&dwarf_format, (const struct perf_event_header *)((uint8_t *)b.words + 4),
				8, &rec) == -EBADMSG, "misaligned record accepted");
	CHECK(perf_record_sample_type(true) & PERF_SAMPLE_STACK_USER, "dwarf has stack");
	CHECK(!(perf_record_sample_type(false) & PERF_SAMPLE_REGS_USER), "fp has no regs");
}

int main(void)
{
	test_sample();
	test_sample_without_user_state();
	test_side_records();
	test_aggregated_sample();
	test_format();
	return test_result();
}
