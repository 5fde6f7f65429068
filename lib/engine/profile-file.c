/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "profile-file.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "byte-reader.h"
#include "cleanup.h"

#define PROFILE_FILE_MAGIC "PROFDPF1"
#define PROFILE_FILE_MAGIC_SIZE 8

enum {
	SECTION_HEADER = 1,  /* pid u32, pad u32, start_unix u64, period u64, duration u64 */
	SECTION_STRINGS = 2, /* n u32, then each: length u32, bytes (no NUL) */
	SECTION_FRAMES = 3,  /* n u32, then each: function, module, build_id, file, line u32,
				address u64, flags u32 (bit 0 inlined, bit 1 kernel) */
	SECTION_STACKS = 4,  /* n u32, then each: parent u32, frame u32 */
	SECTION_SAMPLES = 5, /* n u64, then each: time u64, tid u32, stack u32 */
	SECTION_THREADS = 6, /* n u32, then each: tid u32, name u32 */
	SECTION_LABELS = 7,  /* keys u32, each key u32 (string), then a row of values u32 per
				sample (string or PROFILE_NONE); absent without labels */
	SECTION_MARKERS = 8, /* n u32, then each: tid u32, name u32, start u64, end u64 */
	SECTION_TARGET = 9,  /* flags u32 (bit 0 multi_process, bit 1 untimed), target u32,
				unit u32; processes: n u32, then each (by pid): pid u32, name u32,
				label u32; threads' processes: n u32, then each (by tid): tid u32,
				pid u32 */
	_SECTION_KNOWN_MAX = SECTION_TARGET,
};

#define TARGET_MULTI_PROCESS 1U
#define TARGET_UNTIMED 2U

#define FRAME_BYTES (5 * 4 + 8 + 4)
#define FRAME_INLINED 1U
#define FRAME_KERNEL 2U

/* ---- writing ---- */

typedef struct Out {
	FILE *f;
	long section_start; /* offset of the open section's length field */
} Out;

static void put_u32(Out *o, uint32_t v)
{
	uint8_t b[4] = { v, v >> 8, v >> 16, v >> 24 };

	fwrite(b, 1, sizeof(b), o->f);
}

static void put_u64(Out *o, uint64_t v)
{
	put_u32(o, (uint32_t)v);
	put_u32(o, (uint32_t)(v >> 32));
}

static void section_begin(Out *o, uint32_t tag)
{
	put_u32(o, tag);
	o->section_start = ftell(o->f);
	put_u64(o, 0); /* its length, filled in by section_end() */
}

static void section_end(Out *o)
{
	long end = ftell(o->f);

	fseek(o->f, o->section_start, SEEK_SET);
	put_u64(o, (uint64_t)(end - o->section_start - 8));
	fseek(o->f, end, SEEK_SET);
}

static int compare_tid(const void *a, const void *b)
{
	const ProfileThread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int compare_pid(const void *a, const void *b)
{
	const ProfileProcess *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* What was profiled, and the processes of a multi-process profile ('processes' sorted by pid). */
static void write_target(const Profile *p, const ProfileThread *threads,
			 const ProfileProcess *processes, Out *o)
{
	uint32_t n = 0;

	section_begin(o, SECTION_TARGET);
	put_u32(o, (p->multi_process ? TARGET_MULTI_PROCESS : 0) | (p->untimed ? TARGET_UNTIMED : 0));
	put_u32(o, p->target);
	put_u32(o, p->unit);
	put_u32(o, p->n_processes);
	for (uint32_t i = 0; i < p->n_processes; i++) {
		put_u32(o, processes[i].pid);
		put_u32(o, processes[i].name);
		put_u32(o, processes[i].label);
	}
	for (uint32_t i = 0; i < p->n_threads; i++)
		n += threads[i].pid != 0;
	put_u32(o, n);
	for (uint32_t i = 0; i < p->n_threads; i++)
		if (threads[i].pid != 0) {
			put_u32(o, threads[i].tid);
			put_u32(o, threads[i].pid);
		}
	section_end(o);
}

/*
 * 'threads' and 'processes': the profile's, sorted by tid and pid (the parser
 * then needs no search per thread).
 */
static void write_sections(const Profile *p, const ProfileThread *threads,
			   const ProfileProcess *processes, Out *o)
{
	fwrite(PROFILE_FILE_MAGIC, 1, PROFILE_FILE_MAGIC_SIZE, o->f);

	section_begin(o, SECTION_HEADER);
	put_u32(o, p->pid);
	put_u32(o, 0);
	put_u64(o, p->start_unix_nanos);
	put_u64(o, p->period_nanos);
	put_u64(o, p->duration_nanos);
	section_end(o);

	section_begin(o, SECTION_STRINGS);
	put_u32(o, p->n_strings);
	for (uint32_t i = 0; i < p->n_strings; i++) {
		size_t n = strlen(p->strings[i]);

		put_u32(o, (uint32_t)n);
		fwrite(p->strings[i], 1, n, o->f);
	}
	section_end(o);

	section_begin(o, SECTION_FRAMES);
	put_u32(o, p->n_frames);
	for (uint32_t i = 0; i < p->n_frames; i++) {
		const ProfileFrame *f = &p->frames[i];

		put_u32(o, f->function);
		put_u32(o, f->module);
		put_u32(o, f->build_id);
		put_u32(o, f->file);
		put_u32(o, f->line);
		put_u64(o, f->address);
		put_u32(o, (f->inlined ? FRAME_INLINED : 0) | (f->kernel ? FRAME_KERNEL : 0));
	}
	section_end(o);

	section_begin(o, SECTION_STACKS);
	put_u32(o, p->n_stacks);
	for (uint32_t i = 0; i < p->n_stacks; i++) {
		put_u32(o, p->stacks[i].parent);
		put_u32(o, p->stacks[i].frame);
	}
	section_end(o);

	section_begin(o, SECTION_SAMPLES);
	put_u64(o, p->n_samples);
	for (size_t i = 0; i < p->n_samples; i++) {
		put_u64(o, p->samples[i].time_ns);
		put_u32(o, p->samples[i].tid);
		put_u32(o, p->samples[i].stack);
	}
	section_end(o);

	section_begin(o, SECTION_THREADS);
	put_u32(o, p->n_threads);
	for (uint32_t i = 0; i < p->n_threads; i++) {
		put_u32(o, threads[i].tid);
		put_u32(o, threads[i].name);
	}
	section_end(o);

	if (p->n_label_keys > 0) {
		section_begin(o, SECTION_LABELS);
		put_u32(o, p->n_label_keys);
		for (uint32_t k = 0; k < p->n_label_keys; k++)
			put_u32(o, p->label_keys[k]);
		for (size_t i = 0; i < p->n_samples * p->n_label_keys; i++)
			put_u32(o, p->sample_labels[i]);
		section_end(o);
	}

	if (p->n_markers > 0) {
		section_begin(o, SECTION_MARKERS);
		put_u32(o, p->n_markers);
		for (uint32_t i = 0; i < p->n_markers; i++) {
			put_u32(o, p->markers[i].tid);
			put_u32(o, p->markers[i].name);
			put_u64(o, p->markers[i].start_ns);
			put_u64(o, p->markers[i].end_ns);
		}
		section_end(o);
	}

	write_target(p, threads, processes, o);
}

int profile_file_serialise(const Profile *p, uint8_t **ret_data, size_t *ret_size)
{
	_cleanup_free_ ProfileThread *threads = NULL;
	_cleanup_free_ ProfileProcess *processes = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	Out o = {};
	uLong crc;

	threads = calloc(p->n_threads ?: 1, sizeof(ProfileThread));
	processes = calloc(p->n_processes ?: 1, sizeof(ProfileProcess));
	if (!threads || !processes)
		return -ENOMEM;
	if (p->n_threads > 0) {
		memcpy(threads, p->threads, p->n_threads * sizeof(ProfileThread));
		qsort(threads, p->n_threads, sizeof(ProfileThread), compare_tid);
	}
	if (p->n_processes > 0) {
		memcpy(processes, p->processes, p->n_processes * sizeof(ProfileProcess));
		qsort(processes, p->n_processes, sizeof(ProfileProcess), compare_pid);
	}
	o.f = open_memstream(&buf, &size);
	if (!o.f)
		return -ENOMEM;
	write_sections(p, threads, processes, &o);
	if (fflush(o.f) != 0 || ferror(o.f)) {
		fclose(o.f);
		return -ENOMEM;
	}
	crc = crc32(0, (const Bytef *)buf, (uInt)size);
	put_u32(&o, (uint32_t)crc);
	if (fclose(o.f) != 0)
		return -ENOMEM;
	*ret_data = (uint8_t *)TAKE_PTR(buf);
	*ret_size = size;
	return 0;
}

int profile_file_write_fd(const Profile *p, int fd)
{
	_cleanup_free_ uint8_t *data = NULL;
	size_t size, done = 0;
	int r;

	r = profile_file_serialise(p, &data, &size);
	if (r < 0)
		return r;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		done += (size_t)n;
	}
	return 0;
}

/* ---- parsing ---- */

/* Numbers in the file are little-endian, read with the bounds checked (byte-reader.h). */
static bool get_u32(ByteReader *in, uint32_t *ret)
{
	uint32_t v;

	if (!BYTE_READER_GET(in, v))
		return false;
	*ret = le32toh(v);
	return true;
}

static bool get_u64(ByteReader *in, uint64_t *ret)
{
	uint32_t lo, hi;

	if (!get_u32(in, &lo) || !get_u32(in, &hi))
		return false;
	*ret = (uint64_t)hi << 32 | lo;
	return true;
}

/* A count of records of 'each' bytes that the section really holds. */
static bool get_count(ByteReader *in, bool wide, size_t each, uint64_t *ret)
{
	uint32_t n32;
	uint64_t n;

	if (wide ? !get_u64(in, &n) : !get_u32(in, &n32))
		return false;
	if (!wide)
		n = n32;
	if (n >= PROFILE_NONE && !wide)
		return false;
	if (n > byte_reader_left(in) / each)
		return false;
	*ret = n;
	return true;
}

/* File ids -> ids in the rebuilt profile (duplicates in the file merge when interned). */
typedef struct Parse {
	Profile *p;
	uint32_t *strings, *frames, *stacks;
	uint32_t n_strings, n_frames, n_stacks;
	bool seen[_SECTION_KNOWN_MAX + 1];
} Parse;

static void parse_done(Parse *ps)
{
	free(ps->strings);
	free(ps->frames);
	free(ps->stacks);
}

/* A reference to a string of the file, PROFILE_NONE allowed when 'optional'. */
static bool map_string(const Parse *ps, uint32_t id, bool optional, uint32_t *ret)
{
	if (id == PROFILE_NONE && optional) {
		*ret = PROFILE_NONE;
		return true;
	}
	if (id >= ps->n_strings)
		return false;
	*ret = ps->strings[id];
	return true;
}

/*
 * The count of a table whose records ('each' bytes) later sections refer to
 * by index, and room for each record's id in the rebuilt profile.
 */
static int get_id_table(ByteReader *in, size_t each, uint32_t **ret_ids, uint64_t *ret_n)
{
	uint32_t *ids;
	uint64_t n;

	if (!get_count(in, false, each, &n))
		return -EBADMSG;
	ids = calloc(n ?: 1, sizeof(uint32_t));
	if (!ids)
		return -ENOMEM;
	*ret_ids = ids;
	*ret_n = n;
	return 0;
}

static int parse_header(Parse *ps, ByteReader *in)
{
	uint32_t pid, pad;

	if (!get_u32(in, &pid) || !get_u32(in, &pad) || !get_u64(in, &ps->p->start_unix_nanos) ||
	    !get_u64(in, &ps->p->period_nanos) || !get_u64(in, &ps->p->duration_nanos))
		return -EBADMSG;
	ps->p->pid = pid;
	return 0;
}

static int parse_strings(Parse *ps, ByteReader *in)
{
	uint64_t n;
	int r;

	r = get_id_table(in, 4, &ps->strings, &n);
	if (r < 0)
		return r;
	for (; ps->n_strings < n; ps->n_strings++) {
		const char *text;
		uint32_t len;

		if (!get_u32(in, &len) || !(text = byte_reader_take(in, len)) ||
		    memchr(text, '\0', len))
			return -EBADMSG;
		r = profile_intern_string_len(ps->p, text, len, &ps->strings[ps->n_strings]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_frames(Parse *ps, ByteReader *in)
{
	uint64_t n;
	int r;

	r = get_id_table(in, FRAME_BYTES, &ps->frames, &n);
	if (r < 0)
		return r;
	for (; ps->n_frames < n; ps->n_frames++) {
		uint32_t function, module, build_id, file, flags;
		ProfileFrame f = {};

		if (!get_u32(in, &function) || !get_u32(in, &module) || !get_u32(in, &build_id) ||
		    !get_u32(in, &file) || !get_u32(in, &f.line) || !get_u64(in, &f.address) ||
		    !get_u32(in, &flags))
			return -EBADMSG;
		if (!map_string(ps, function, false, &f.function) ||
		    !map_string(ps, module, true, &f.module) ||
		    !map_string(ps, build_id, true, &f.build_id) ||
		    !map_string(ps, file, true, &f.file) || (flags & ~(FRAME_INLINED | FRAME_KERNEL)))
			return -EBADMSG;
		f.inlined = flags & FRAME_INLINED;
		f.kernel = flags & FRAME_KERNEL;
		r = profile_intern_frame(ps->p, &f, &ps->frames[ps->n_frames]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_stacks(Parse *ps, ByteReader *in)
{
	uint64_t n;
	int r;

	r = get_id_table(in, 8, &ps->stacks, &n);
	if (r < 0)
		return r;
	for (; ps->n_stacks < n; ps->n_stacks++) {
		uint32_t parent, frame;

		if (!get_u32(in, &parent) || !get_u32(in, &frame))
			return -EBADMSG;
		/* parents come first: no cycles, and every stack reaches a root */
		if ((parent != PROFILE_NONE && parent >= ps->n_stacks) || frame >= ps->n_frames)
			return -EBADMSG;
		r = profile_intern_stack(ps->p, parent == PROFILE_NONE ? PROFILE_NONE
								       : ps->stacks[parent],
					 ps->frames[frame], &ps->stacks[ps->n_stacks]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_samples(Parse *ps, ByteReader *in)
{
	uint64_t n;
	int r;

	if (!get_count(in, true, 16, &n))
		return -EBADMSG;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t time;
		uint32_t tid, stack;

		if (!get_u64(in, &time) || !get_u32(in, &tid) || !get_u32(in, &stack))
			return -EBADMSG;
		if (stack != PROFILE_NONE && stack >= ps->n_stacks)
			return -EBADMSG;
		r = profile_add_sample(ps->p, tid, time,
				       stack == PROFILE_NONE ? PROFILE_NONE : ps->stacks[stack]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_threads(Parse *ps, ByteReader *in)
{
	uint64_t n;
	int r;

	if (!get_count(in, false, 8, &n))
		return -EBADMSG;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t tid, name, mapped;

		if (!get_u32(in, &tid) || !get_u32(in, &name) || !map_string(ps, name, true, &mapped))
			return -EBADMSG;
		/* ascending: each one new, without a search (a linear one per thread is quadratic) */
		if (i > 0 && tid <= ps->p->threads[ps->p->n_threads - 1].tid)
			return -EBADMSG;
		r = profile_append_thread(ps->p, tid, mapped);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One row of label values per sample: the samples come first. */
static int parse_labels(Parse *ps, ByteReader *in)
{
	const char *keys[PROFILE_LABEL_KEYS_MAX];
	Profile *p = ps->p;
	uint32_t n;
	int r;

	if (!get_u32(in, &n) || n == 0 || n > PROFILE_LABEL_KEYS_MAX)
		return -EBADMSG;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t id, mapped;

		if (!get_u32(in, &id) || !map_string(ps, id, false, &mapped))
			return -EBADMSG;
		keys[k] = p->strings[mapped];
	}
	if (byte_reader_left(in) / 4 / n != p->n_samples ||
	    byte_reader_left(in) % (4 * (size_t)n) != 0)
		return -EBADMSG;
	r = profile_set_label_keys(p, keys, n);
	if (r == -EBUSY || r == -EINVAL)
		return -EBADMSG; /* a key given twice would be one key twice: refused as well */
	if (r < 0)
		return r;
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t j = 0; j < k; j++)
			if (p->label_keys[j] == p->label_keys[k])
				return -EBADMSG;
	for (size_t i = 0; i < p->n_samples; i++)
		for (uint32_t k = 0; k < n; k++) {
			uint32_t id, mapped;

			if (!get_u32(in, &id) || !map_string(ps, id, true, &mapped))
				return -EBADMSG;
			profile_set_sample_label(p, i, k, mapped);
		}
	return 0;
}

static int parse_markers(Parse *ps, ByteReader *in)
{
	uint64_t n;
	int r;

	if (!get_count(in, false, 24, &n))
		return -EBADMSG;
	for (uint64_t i = 0; i < n; i++) {
		ProfileMarker m;
		uint32_t name;

		if (!get_u32(in, &m.tid) || !get_u32(in, &name) || !get_u64(in, &m.start_ns) ||
		    !get_u64(in, &m.end_ns) || !map_string(ps, name, false, &m.name) ||
		    m.end_ns < m.start_ns)
			return -EBADMSG;
		r = profile_add_marker(ps->p, &m);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Files written before it have none: a profile of one process, timed. */
static int parse_target(Parse *ps, ByteReader *in)
{
	Profile *p = ps->p;
	uint32_t flags, target, unit, n, k = 0;
	int r;

	if (!get_u32(in, &flags) || !get_u32(in, &target) || !get_u32(in, &unit) ||
	    (flags & ~(TARGET_MULTI_PROCESS | TARGET_UNTIMED)) ||
	    !map_string(ps, target, true, &p->target) || !map_string(ps, unit, true, &p->unit) ||
	    !get_u32(in, &n) || n > byte_reader_left(in) / 12)
		return -EBADMSG;
	p->multi_process = flags & TARGET_MULTI_PROCESS;
	p->untimed = flags & TARGET_UNTIMED;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pid, name, label;

		if (!get_u32(in, &pid) || !get_u32(in, &name) || !get_u32(in, &label) ||
		    !map_string(ps, name, true, &name) || !map_string(ps, label, false, &label) ||
		    (i > 0 && pid <= p->processes[p->n_processes - 1].pid))
			return -EBADMSG;
		r = profile_append_process(p, pid, name, label);
		if (r < 0)
			return r;
	}
	if (!get_u32(in, &n) || n > byte_reader_left(in) / 8)
		return -EBADMSG;
	/* both ascending: one walk through the threads, one search per thread in the processes */
	for (uint32_t i = 0; i < n; i++) {
		ProfileProcess key;
		uint32_t tid;

		if (!get_u32(in, &tid) || !get_u32(in, &key.pid))
			return -EBADMSG;
		while (k < p->n_threads && p->threads[k].tid < tid)
			k++;
		if (k == p->n_threads || p->threads[k].tid != tid || p->n_processes == 0 ||
		    !bsearch(&key, p->processes, p->n_processes, sizeof(ProfileProcess), compare_pid))
			return -EBADMSG;
		p->threads[k++].pid = key.pid;
	}
	return 0;
}

static int parse_section(Parse *ps, uint32_t tag, ByteReader *in)
{
	/* each known section once, in order: what a later one refers to is there */
	if (tag >= 1 && tag <= _SECTION_KNOWN_MAX) {
		if (ps->seen[tag])
			return -EBADMSG;
		for (uint32_t t = tag + 1; t <= _SECTION_KNOWN_MAX; t++)
			if (ps->seen[t])
				return -EBADMSG;
		ps->seen[tag] = true;
	}
	switch (tag) {
	case SECTION_HEADER:
		return parse_header(ps, in);
	case SECTION_STRINGS:
		return parse_strings(ps, in);
	case SECTION_FRAMES:
		return parse_frames(ps, in);
	case SECTION_STACKS:
		return parse_stacks(ps, in);
	case SECTION_SAMPLES:
		return parse_samples(ps, in);
	case SECTION_THREADS:
		return parse_threads(ps, in);
	case SECTION_LABELS:
		return parse_labels(ps, in);
	case SECTION_MARKERS:
		return parse_markers(ps, in);
	case SECTION_TARGET:
		return parse_target(ps, in);
	default:
		return 0; /* a newer writer's: skipped */
	}
}

int profile_file_parse(const uint8_t *data, size_t size, Profile **ret)
{
	_cleanup_profile_ Profile *p = NULL;
	Parse ps = {};
	ByteReader in, crc_in;
	uint32_t crc;
	int r;

	if (!data || size < PROFILE_FILE_MAGIC_SIZE + 4 ||
	    memcmp(data, PROFILE_FILE_MAGIC, PROFILE_FILE_MAGIC_SIZE) != 0)
		return -EBADMSG;
	crc_in = byte_reader(data + size - 4, 4);
	if (!get_u32(&crc_in, &crc) || crc != (uint32_t)crc32(0, data, (uInt)(size - 4)))
		return -EBADMSG;
	r = profile_new(&p);
	if (r < 0)
		return r;
	ps.p = p;
	in = byte_reader(data + PROFILE_FILE_MAGIC_SIZE, size - PROFILE_FILE_MAGIC_SIZE - 4);
	while (r >= 0 && byte_reader_left(&in) > 0) {
		uint32_t tag;
		uint64_t len;
		const uint8_t *content;
		ByteReader section;

		if (!get_u32(&in, &tag) || !get_u64(&in, &len) || len > byte_reader_left(&in)) {
			r = -EBADMSG;
			break;
		}
		content = byte_reader_take(&in, (size_t)len);
		section = byte_reader(content, (size_t)len);
		r = parse_section(&ps, tag, &section);
		/* a known section is exactly as long as its content */
		if (r >= 0 && tag >= 1 && tag <= _SECTION_KNOWN_MAX && byte_reader_left(&section) != 0)
			r = -EBADMSG;
	}
	if (r >= 0 && (!ps.seen[SECTION_HEADER] || !ps.seen[SECTION_STRINGS]))
		r = -EBADMSG;
	parse_done(&ps);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}
