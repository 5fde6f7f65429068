/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-profile-file: the compact profile file. Profiles of every synthetic
 * kind survive a round trip byte for byte and export the same; hostile files
 * (truncated, flipped, or well-formed with a valid CRC but wrong references,
 * huge counts, sections out of order) are refused, never trusted. A profile
 * of many processes keeps its target, processes and each thread's process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cleanup.h"
#include "export.h"
#include "profile-file.h"
#include "synthetic-profile.h"
#include "test-util.h"

static void check_roundtrip(SyntheticKind kind, size_t n_samples, uint32_t n_stacks)
{
	_cleanup_profile_ Profile *p = NULL, *q = NULL;
	_cleanup_free_ uint8_t *data = NULL, *again = NULL;
	_cleanup_free_ char *folded_p = NULL, *folded_q = NULL;
	size_t size, size_again, n;
	int r;

	CHECK(synthetic_profile(kind, n_samples, n_stacks, 42, &p) == 0, "synthetic %d", kind);
	if (!p)
		return;
	p->duration_nanos = 123456789;
	CHECK(profile_file_serialise(p, &data, &size) == 0, "serialise");
	r = profile_file_parse(data, size, &q);
	CHECK(r == 0, "own output refused: %d", r);
	if (r < 0)
		return;
	CHECK(q->n_strings == p->n_strings && q->n_frames == p->n_frames &&
		      q->n_stacks == p->n_stacks && q->n_samples == p->n_samples &&
		      q->n_threads == p->n_threads,
	      "counts differ: strings %u/%u frames %u/%u stacks %u/%u samples %zu/%zu threads %u/%u",
	      q->n_strings, p->n_strings, q->n_frames, p->n_frames, q->n_stacks, p->n_stacks,
	      q->n_samples, p->n_samples, q->n_threads, p->n_threads);
	CHECK(q->pid == p->pid && q->start_unix_nanos == p->start_unix_nanos &&
		      q->period_nanos == p->period_nanos && q->duration_nanos == p->duration_nanos,
	      "header differs");
	CHECK(profile_file_serialise(q, &again, &size_again) == 0 && size_again == size &&
		      memcmp(again, data, size) == 0, "second serialisation differs");
	CHECK(export_profile_to_memory(p, EXPORT_FOLDED, &folded_p, &n) == 0 &&
		      export_profile_to_memory(q, EXPORT_FOLDED, &folded_q, &n) == 0 &&
		      strcmp(folded_p, folded_q) == 0, "the folded exports differ");
}

/* Threads spread over processes (every other one in a second process), as a cgroup's profile. */
static void check_multi_process(void)
{
	_cleanup_profile_ Profile *p = NULL, *q = NULL;
	_cleanup_free_ uint8_t *data = NULL, *again = NULL;
	_cleanup_free_ char *folded_p = NULL, *folded_q = NULL;
	size_t size, size_again, n;
	uint32_t assigned = 0;
	int r;

	CHECK(synthetic_profile(SYNTHETIC_MIXED, 500, 50, 42, &p) == 0, "synthetic");
	if (!p)
		return;
	p->pid = 0;
	p->multi_process = p->untimed = true;
	CHECK(profile_set_target(p, "unit:x.service", "x.service") == 0, "set the target");
	/* the last thread in no process: a thread whose process was never learnt */
	for (uint32_t i = 0; i + 1 < p->n_threads; i++, assigned++)
		CHECK(profile_set_thread_process(p, p->threads[i].tid, 900 + i % 2,
						 i % 2 ? "second" : NULL) == 0, "set a thread's process");
	CHECK(profile_file_serialise(p, &data, &size) == 0, "serialise");
	r = profile_file_parse(data, size, &q);
	CHECK(r == 0, "own output refused: %d", r);
	if (r < 0)
		return;
	CHECK(q->multi_process && q->untimed && q->pid == 0 && q->n_processes == 2 &&
		      strcmp(q->strings[q->target], "unit:x.service") == 0 &&
		      strcmp(q->strings[q->unit], "x.service") == 0,
	      "target lost: multi %d untimed %d processes %u", q->multi_process, q->untimed,
	      q->n_processes);
	for (uint32_t i = 0; i < p->n_threads; i++)
		CHECK(profile_thread_pid(q, p->threads[i].tid) == p->threads[i].pid,
		      "thread %u: process %u, was %u", p->threads[i].tid,
		      profile_thread_pid(q, p->threads[i].tid), p->threads[i].pid);
	CHECK(assigned > 1 && profile_find_process(q, 901) &&
		      strcmp(q->strings[profile_find_process(q, 901)->label], "second-901") == 0 &&
		      strcmp(q->strings[profile_find_process(q, 900)->label], "[unknown]-900") == 0,
	      "process names or labels lost");
	CHECK(profile_file_serialise(q, &again, &size_again) == 0 && size_again == size &&
		      memcmp(again, data, size) == 0, "second serialisation differs");
	CHECK(export_profile_to_memory(p, EXPORT_FOLDED, &folded_p, &n) == 0 &&
		      export_profile_to_memory(q, EXPORT_FOLDED, &folded_q, &n) == 0 &&
		      strcmp(folded_p, folded_q) == 0 && strstr(folded_q, "second-901;"),
	      "the folded exports differ or lack the process frames");
}

/* A file of our own making: sections written raw, the CRC made valid. */
typedef struct Builder {
	uint8_t buf[4096];
	size_t n;
} Builder;

static void b_u32(Builder *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->buf[b->n++] = (uint8_t)(v >> (8 * i));
}

static void b_u64(Builder *b, uint64_t v)
{
	b_u32(b, (uint32_t)v);
	b_u32(b, (uint32_t)(v >> 32));
}

static void b_bytes(Builder *b, const void *p, size_t n)
{
	memcpy(b->buf + b->n, p, n);
	b->n += n;
}

/* A section: tag, length, then 'n' u32 words of payload. */
static void b_section(Builder *b, uint32_t tag, const uint32_t *words, size_t n)
{
	b_u32(b, tag);
	b_u64(b, n * 4);
	for (size_t i = 0; i < n; i++)
		b_u32(b, words[i]);
}

static void b_begin(Builder *b)
{
	static const uint32_t header[] = { 7, 0, 0, 0, 1000, 0, 5, 0 };

	b->n = 0;
	b_bytes(b, "PROFDPF1", 8);
	b_section(b, 1, header, ELEMENTSOF(header));
}

static int b_parse(Builder *b)
{
	_cleanup_profile_ Profile *p = NULL;

	b_u32(b, (uint32_t)crc32(0, b->buf, (uInt)b->n));
	return profile_file_parse(b->buf, b->n, &p);
}

static void check_hostile(void)
{
	Builder b;
	int r;

	/* a minimal valid file: header and no strings */
	b_begin(&b);
	b_section(&b, 2, (uint32_t[]){ 0 }, 1);
	CHECK(b_parse(&b) == 0, "minimal file refused");

	/* an unknown section is skipped */
	b_begin(&b);
	b_section(&b, 99, (uint32_t[]){ 1, 2, 3 }, 3);
	b_section(&b, 2, (uint32_t[]){ 0 }, 1);
	CHECK(b_parse(&b) == 0, "unknown section not skipped");

	/* no strings section */
	b_begin(&b);
	CHECK(b_parse(&b) == -EBADMSG, "file without strings accepted");

	/* a count far beyond the bytes there */
	b_begin(&b);
	b_section(&b, 2, (uint32_t[]){ 0x7fffffff }, 1);
	CHECK(b_parse(&b) == -EBADMSG, "huge string count accepted");

	/* a string with a NUL in it */
	b_begin(&b);
	b_u32(&b, 2);
	b_u64(&b, 4 + 4 + 2);
	b_u32(&b, 1);
	b_u32(&b, 2);
	b_bytes(&b, "a\0", 2);
	CHECK(b_parse(&b) == -EBADMSG, "string with a NUL accepted");

	/* a frame naming a string that is not there */
	b_begin(&b);
	b_section(&b, 2, (uint32_t[]){ 0 }, 1);
	b_section(&b, 3, (uint32_t[]){ 1, 0, 0xffffffff, 0xffffffff, 0xffffffff, 0, 0, 0, 0 }, 9);
	CHECK(b_parse(&b) == -EBADMSG, "frame with a missing function name accepted");

	/* a section longer than what it holds */
	b_begin(&b);
	b_u32(&b, 2);
	b_u64(&b, 4 + 4 + 1 + 3);
	b_u32(&b, 1);
	b_u32(&b, 1);
	b_bytes(&b, "f\0\0\0", 4);
	r = b_parse(&b);
	CHECK(r == -EBADMSG, "string section with trailing bytes accepted: %d", r);

	/* one string "f", one frame; then a stack whose parent comes after it */
	b_begin(&b);
	b_u32(&b, 2);
	b_u64(&b, 4 + 4 + 1);
	b_u32(&b, 1);
	b_u32(&b, 1);
	b_bytes(&b, "f", 1);
	b_section(&b, 3, (uint32_t[]){ 1, 0, 0xffffffff, 0xffffffff, 0xffffffff, 0, 0, 0, 0 }, 9);
	{
		/* the same, valid: one frame, one stack */
		Builder ok = b;

		b_section(&ok, 4, (uint32_t[]){ 1, 0xffffffff, 0 }, 3);
		CHECK(b_parse(&ok) == 0, "valid frame and stack refused");
	}
	b_section(&b, 4, (uint32_t[]){ 2, 1, 0, 0xffffffff, 0 }, 5);
	CHECK(b_parse(&b) == -EBADMSG, "stack with a later parent accepted");

	/* sections out of order: strings after frames */
	b_begin(&b);
	b_section(&b, 2, (uint32_t[]){ 0 }, 1);
	b_section(&b, 6, (uint32_t[]){ 0 }, 1);
	b_section(&b, 3, (uint32_t[]){ 0 }, 1);
	CHECK(b_parse(&b) == -EBADMSG, "frames after threads accepted");

	/* threads not in ascending order */
	b_begin(&b);
	b_section(&b, 2, (uint32_t[]){ 0 }, 1);
	b_section(&b, 6, (uint32_t[]){ 2, 5, 0xffffffff, 5, 0xffffffff }, 5);
	CHECK(b_parse(&b) == -EBADMSG, "duplicate thread accepted");

	/* the target section: a thread in a process that is not there, a thread that is not there */
	b_begin(&b);
	b_section(&b, 2, (uint32_t[]){ 0 }, 1);
	b_section(&b, 6, (uint32_t[]){ 1, 5, 0xffffffff }, 3);
	{
		Builder ok = b;

		b_section(&ok, 9, (uint32_t[]){ 1, 0xffffffff, 0xffffffff, 0, 0 }, 5);
		CHECK(b_parse(&ok) == 0, "valid target section refused");
	}
	{
		Builder bad = b;

		b_section(&bad, 9, (uint32_t[]){ 1, 0xffffffff, 0xffffffff, 0, 1, 5, 3 }, 7);
		CHECK(b_parse(&bad) == -EBADMSG, "thread in a missing process accepted");
	}
	b_section(&b, 9, (uint32_t[]){ 4, 0xffffffff, 0xffffffff, 0, 0 }, 5);
	CHECK(b_parse(&b) == -EBADMSG, "unknown target flags accepted");

	/* a sample naming a stack that is not there */
	b_begin(&b);
	b_section(&b, 2, (uint32_t[]){ 0 }, 1);
	b_section(&b, 5, (uint32_t[]){ 1, 0, 0, 0, 1, 0 }, 6);
	CHECK(b_parse(&b) == -EBADMSG, "sample with a missing stack accepted");
}

/* Every truncation and every single flipped bit of a real file is refused. */
static void check_damage(void)
{
	_cleanup_profile_ Profile *p = NULL;
	_cleanup_free_ uint8_t *data = NULL;
	size_t size;
	unsigned accepted = 0;

	CHECK(synthetic_profile(SYNTHETIC_MIXED, 200, 20, 7, &p) == 0 &&
		      profile_file_serialise(p, &data, &size) == 0, "serialise");
	if (!data)
		return;
	for (size_t n = 0; n < size; n++) {
		Profile *q = NULL;

		accepted += profile_file_parse(data, n, &q) == 0;
		profile_free(q);
	}
	CHECK(accepted == 0, "%u truncated files accepted", accepted);
	for (size_t i = 0; i < size; i += 3) {
		Profile *q = NULL;

		data[i] ^= 0x10;
		accepted += profile_file_parse(data, size, &q) == 0;
		profile_free(q);
		data[i] ^= 0x10;
	}
	CHECK(accepted == 0, "%u damaged files accepted", accepted);
}

int main(void)
{
	check_roundtrip(SYNTHETIC_MIXED, 500, 50);
	check_roundtrip(SYNTHETIC_HOSTILE, 500, 50);
	check_roundtrip(SYNTHETIC_RANDOM, 20000, 2000);
	check_multi_process();
	check_hostile();
	check_damage();
	return test_result();
}
