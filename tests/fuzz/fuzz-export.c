/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-export: profiles built from arbitrary bytes (names with any bytes,
 * inline and kernel frames, stacks of any shape, samples on any thread and at
 * any time, threads of several processes), folded and written in every format. The folding must also agree
 * with itself: every thread's counts add up to the merged ones.
 *
 * Input: a stream of operations, one byte each followed by its operands.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "export.h"
#include "fold.h"

typedef struct Input {
	const uint8_t *data;
	size_t size;
} Input;

static uint32_t take(Input *in, unsigned bytes)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < bytes && in->size > 0; i++, in->data++, in->size--)
		v = v << 8 | in->data[0];
	return v;
}

static void build(Profile *p, Input *in)
{
	while (in->size > 0) {
		uint32_t op = take(in, 1), id;

		switch (op % 6) {
		case 0: { /* a string of up to 31 arbitrary bytes (no NUL) */
			size_t n = take(in, 1) % 32;
			char s[32];

			for (size_t i = 0; i < n; i++)
				s[i] = (char)(take(in, 1) | 1);
			(void)profile_intern_string_len(p, s, n, &id);
			break;
		}
		case 1: { /* a frame over the strings so far */
			ProfileFrame f = { .module = PROFILE_NONE, .build_id = PROFILE_NONE,
					   .file = PROFILE_NONE };
			uint32_t flags = take(in, 1);

			if (p->n_strings == 0)
				break;
			f.function = take(in, 1) % p->n_strings;
			if (flags & 1)
				f.module = take(in, 1) % p->n_strings;
			if (flags & 2)
				f.file = take(in, 1) % p->n_strings;
			if (flags & 4)
				f.build_id = take(in, 1) % p->n_strings;
			f.line = take(in, 1);
			f.address = take(in, 4);
			f.inlined = flags & 8;
			f.kernel = flags & 16;
			(void)profile_intern_frame(p, &f, &id);
			break;
		}
		case 2: { /* a stack node under an earlier one, or a root */
			uint32_t parent = take(in, 2), frame = take(in, 1);

			if (p->n_frames == 0)
				break;
			parent = p->n_stacks && parent % 4 ? parent % p->n_stacks : PROFILE_NONE;
			(void)profile_intern_stack(p, parent, frame % p->n_frames, &id);
			break;
		}
		case 3: { /* samples: thread, stack (or none), time, repeat count */
			uint32_t tid = take(in, 1) % 8, stack = take(in, 2), time = take(in, 2);
			uint32_t repeat = take(in, 1) % 16 + 1;

			stack = p->n_stacks && stack % 8 ? stack % p->n_stacks : PROFILE_NONE;
			for (uint32_t i = 0; i < repeat; i++)
				(void)profile_add_sample(p, 100 + tid, time * 1000ULL + i, stack);
			break;
		}
		case 4: /* name a thread */
			if (p->n_strings)
				(void)profile_set_thread(p, 100 + take(in, 1) % 8,
							 p->strings[take(in, 1) % p->n_strings]);
			break;
		default: { /* put a thread in a process (named or not): a multi-process profile */
			uint32_t tid = 100 + take(in, 1) % 8, pid = 1000 + take(in, 1) % 4;
			uint32_t name = take(in, 1);

			p->multi_process = true;
			p->pid = 0;
			(void)profile_set_thread_process(p, tid, pid, p->n_strings && name % 2 ?
							 p->strings[name % p->n_strings] : NULL);
		}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_profile_ Profile *p = NULL;
	_cleanup_(folding_freep) Folding *f = NULL;
	Input in = { data, size };
	uint64_t merged = 0, threads = 0;

	if (profile_new(&p) < 0)
		return 0;
	p->pid = 100;
	p->period_nanos = 1000000;
	build(p, &in);

	if (fold_profile(p, &f) < 0)
		return 0;
	for (size_t i = 0; i < f->n_stacks; i++)
		merged += f->stacks[i].count;
	for (uint32_t t = 0; t < f->n_threads; t++)
		for (size_t i = 0; i < f->threads[t].n_stacks; i++)
			threads += f->threads[t].stacks[i].count;
	if (merged != f->n_samples || threads != f->n_samples ||
	    f->n_samples + f->n_empty != p->n_samples)
		abort();

	for (int format = 0; format < _EXPORT_FORMAT_MAX; format++) {
		_cleanup_free_ char *out = NULL;
		size_t n = 0;

		if (export_format_is_profile(format) &&
		    export_profile_to_memory(p, format, &out, &n) < 0)
			abort();
	}
	return 0;
}
