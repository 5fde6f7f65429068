/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "hash.h"

/*
 * One IdTable per interned kind: the tables hold only ids; hashing and
 * equality look at the profile's arrays.
 */

/* FNV-1a, the length mixed in: a string's bytes need not end in NUL here. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	return hash_combine(hash_fnv1a(HASH_FNV1A_BASIS, s, len), len);
}

static uint64_t hash_string_id(const void *userdata, uint32_t id)
{
	const Profile *p = userdata;

	return hash_bytes(p->strings[id], strlen(p->strings[id]));
}

static uint64_t hash_frame(const ProfileFrame *f)
{
	uint64_t h = 0;

	h = hash_combine(h, f->function);
	h = hash_combine(h, f->module);
	h = hash_combine(h, f->build_id);
	h = hash_combine(h, f->file);
	h = hash_combine(h, f->line);
	h = hash_combine(h, f->address);
	return hash_combine(h, (uint64_t)f->inlined << 1 | f->kernel);
}

static uint64_t hash_frame_id(const void *userdata, uint32_t id)
{
	const Profile *p = userdata;

	return hash_frame(&p->frames[id]);
}

static uint64_t hash_stack(uint32_t parent, uint32_t frame)
{
	return hash_combine(hash_combine(0, parent), frame);
}

static uint64_t hash_stack_id(const void *userdata, uint32_t id)
{
	const Profile *p = userdata;

	return hash_stack(p->stacks[id].parent, p->stacks[id].frame);
}

/* What a lookup compares stored ids against. */
typedef struct StringKey {
	const Profile *profile;
	const char *s;
	size_t len;
} StringKey;

typedef struct FrameKey {
	const Profile *profile;
	const ProfileFrame *frame;
} FrameKey;

typedef struct StackKey {
	const Profile *profile;
	uint32_t parent, frame;
} StackKey;

static bool string_key_equal(const void *userdata, uint32_t id)
{
	const StringKey *k = userdata;
	const char *t = k->profile->strings[id];

	return strncmp(t, k->s, k->len) == 0 && t[k->len] == '\0';
}

static bool frame_equal(const ProfileFrame *a, const ProfileFrame *b)
{
	return a->function == b->function && a->module == b->module && a->build_id == b->build_id &&
	       a->file == b->file && a->line == b->line && a->address == b->address &&
	       a->inlined == b->inlined && a->kernel == b->kernel;
}

static bool frame_key_equal(const void *userdata, uint32_t id)
{
	const FrameKey *k = userdata;

	return frame_equal(&k->profile->frames[id], k->frame);
}

static bool stack_key_equal(const void *userdata, uint32_t id)
{
	const StackKey *k = userdata;
	const ProfileStackNode *n = &k->profile->stacks[id];

	return n->parent == k->parent && n->frame == k->frame;
}

int profile_new(Profile **ret)
{
	_cleanup_profile_ Profile *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->target = p->unit = PROFILE_NONE;
	r = id_table_init(&p->string_index, 512);
	if (r >= 0)
		r = id_table_init(&p->frame_index, 512);
	if (r >= 0)
		r = id_table_init(&p->stack_index, 512);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}

Profile *profile_free(Profile *p)
{
	if (!p)
		return NULL;
	for (uint32_t i = 0; i < p->n_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->frames);
	free(p->stacks);
	free(p->samples);
	free(p->threads);
	free(p->mappings);
	free(p->processes);
	free(p->sample_labels);
	free(p->markers);
	id_table_done(&p->string_index);
	id_table_done(&p->frame_index);
	id_table_done(&p->stack_index);
	free(p);
	return NULL;
}

const char *profile_string(const Profile *p, uint32_t id)
{
	if (id >= p->n_strings)
		return NULL;
	return p->strings[id];
}

int profile_intern_string_len(Profile *p, const char *s, size_t len, uint32_t *ret)
{
	uint32_t slot;
	char *copy;
	int r;

	r = id_table_reserve(&p->string_index, 1, hash_string_id, p);
	if (r < 0)
		return r;
	if (id_table_find(&p->string_index, hash_bytes(s, len), string_key_equal,
			  &(StringKey){ p, s, len }, &slot)) {
		*ret = p->string_index.slots[slot];
		return 0;
	}
	r = ARRAY_RESERVE_U32(p->strings, p->strings_allocated, (size_t)p->n_strings + 1, 256);
	if (r < 0)
		return r;
	copy = strndup(s, len);
	if (!copy)
		return -ENOMEM;
	p->strings[p->n_strings] = copy;
	id_table_insert(&p->string_index, slot, p->n_strings);
	*ret = p->n_strings++;
	return 0;
}

int profile_intern_string(Profile *p, const char *s, uint32_t *ret)
{
	return profile_intern_string_len(p, s, strlen(s), ret);
}

int profile_intern_frame(Profile *p, const ProfileFrame *frame, uint32_t *ret)
{
	uint32_t slot;
	int r;

	r = id_table_reserve(&p->frame_index, 1, hash_frame_id, p);
	if (r < 0)
		return r;
	if (id_table_find(&p->frame_index, hash_frame(frame), frame_key_equal,
			  &(FrameKey){ p, frame }, &slot)) {
		*ret = p->frame_index.slots[slot];
		return 0;
	}
	r = ARRAY_RESERVE_U32(p->frames, p->frames_allocated, (size_t)p->n_frames + 1, 256);
	if (r < 0)
		return r;
	p->frames[p->n_frames] = *frame;
	id_table_insert(&p->frame_index, slot, p->n_frames);
	*ret = p->n_frames++;
	return 0;
}

int profile_replace_frames(Profile *p, const uint32_t *ids, const ProfileFrame *frames, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] >= p->n_frames)
			return -EINVAL;
	for (size_t i = 0; i < n; i++)
		p->frames[ids[i]] = frames[i];
	if (n == 0)
		return 0;
	/* hashes changed: the index is rebuilt (equal frames may now have two ids; both stay) */
	id_table_rebuild(&p->frame_index, p->n_frames, hash_frame_id, p);
	return 0;
}

int profile_intern_stack(Profile *p, uint32_t parent, uint32_t frame, uint32_t *ret)
{
	uint32_t slot;
	int r;

	if (frame >= p->n_frames || (parent != PROFILE_NONE && parent >= p->n_stacks))
		return -EINVAL;
	r = id_table_reserve(&p->stack_index, 1, hash_stack_id, p);
	if (r < 0)
		return r;
	if (id_table_find(&p->stack_index, hash_stack(parent, frame), stack_key_equal,
			  &(StackKey){ p, parent, frame }, &slot)) {
		*ret = p->stack_index.slots[slot];
		return 0;
	}
	r = ARRAY_RESERVE_U32(p->stacks, p->stacks_allocated, (size_t)p->n_stacks + 1, 256);
	if (r < 0)
		return r;
	p->stacks[p->n_stacks] = (ProfileStackNode){ .parent = parent, .frame = frame };
	id_table_insert(&p->stack_index, slot, p->n_stacks);
	*ret = p->n_stacks++;
	return 0;
}

int profile_intern_stack_leaf_first(Profile *p, const uint32_t *frames, size_t n, uint32_t *ret)
{
	uint32_t node = PROFILE_NONE;
	int r;

	for (size_t i = n; i > 0; i--) {
		r = profile_intern_stack(p, node, frames[i - 1], &node);
		if (r < 0)
			return r;
	}
	*ret = node;
	return 0;
}

int profile_add_sample(Profile *p, uint32_t tid, uint64_t time_ns, uint32_t stack)
{
	if (stack != PROFILE_NONE && stack >= p->n_stacks)
		return -EINVAL;
	if (p->n_samples >= p->samples_allocated) {
		/* the label rows follow the samples' capacity (profile-labels.c) */
		size_t n = p->samples_allocated;
		int r = ARRAY_RESERVE(p->samples, n, p->n_samples + 1, 4096);

		if (r < 0)
			return r;
		if (p->n_label_keys > 0) {
			uint32_t *l = reallocarray(p->sample_labels, n * p->n_label_keys, sizeof(uint32_t));

			if (!l)
				return -ENOMEM;
			p->sample_labels = l;
		}
		p->samples_allocated = n;
	}
	for (uint32_t k = 0; k < p->n_label_keys; k++)
		profile_set_sample_label(p, p->n_samples, k, PROFILE_NONE);
	p->samples[p->n_samples++] = (ProfileSample){ .time_ns = time_ns, .tid = tid, .stack = stack };
	return 0;
}

const ProfileThread *profile_find_thread(const Profile *p, uint32_t tid)
{
	/* Threads number in the tens; a scan beats keeping another index. */
	for (uint32_t i = 0; i < p->n_threads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

int profile_append_thread(Profile *p, uint32_t tid, uint32_t name)
{
	int r;

	if (name != PROFILE_NONE && name >= p->n_strings)
		return -EINVAL;
	r = ARRAY_RESERVE_U32(p->threads, p->threads_allocated, (size_t)p->n_threads + 1, 256);
	if (r < 0)
		return r;
	p->threads[p->n_threads++] = (ProfileThread){ .tid = tid, .name = name };
	return 0;
}

int profile_set_thread(Profile *p, uint32_t tid, const char *name)
{
	ProfileThread *t = (ProfileThread *)profile_find_thread(p, tid);
	uint32_t name_id = PROFILE_NONE;
	int r;

	if (name) {
		r = profile_intern_string(p, name, &name_id);
		if (r < 0)
			return r;
	}
	if (!t) {
		r = ARRAY_RESERVE_U32(p->threads, p->threads_allocated, (size_t)p->n_threads + 1, 256);
		if (r < 0)
			return r;
		t = &p->threads[p->n_threads++];
		t->tid = tid;
		t->name = PROFILE_NONE;
		t->pid = 0;
	}
	if (name_id != PROFILE_NONE)
		t->name = name_id;
	return 0;
}

const ProfileMapping *profile_find_mapping(const Profile *p, uint32_t module, uint32_t build_id)
{
	/* one per mapped file: tens, like threads */
	for (uint32_t i = 0; i < p->n_mappings; i++)
		if (p->mappings[i].module == module && p->mappings[i].build_id == build_id)
			return &p->mappings[i];
	return NULL;
}

int profile_add_mapping(Profile *p, const ProfileMapping *m)
{
	int r;

	if (profile_find_mapping(p, m->module, m->build_id))
		return 0;
	r = ARRAY_RESERVE_U32(p->mappings, p->mappings_allocated, (size_t)p->n_mappings + 1, 256);
	if (r < 0)
		return r;
	p->mappings[p->n_mappings++] = *m;
	return 0;
}

const ProfileProcess *profile_find_process(const Profile *p, uint32_t pid)
{
	for (uint32_t i = 0; i < p->n_processes; i++)
		if (p->processes[i].pid == pid)
			return &p->processes[i];
	return NULL;
}

int profile_set_thread_process(Profile *p, uint32_t tid, uint32_t pid, const char *process_name)
{
	ProfileProcess *proc = (ProfileProcess *)profile_find_process(p, pid);
	ProfileThread *t;
	uint32_t name_id = PROFILE_NONE;
	int r;

	r = profile_set_thread(p, tid, NULL);
	if (r < 0)
		return r;
	if (process_name) {
		r = profile_intern_string(p, process_name, &name_id);
		if (r < 0)
			return r;
	}
	if (!proc) {
		r = ARRAY_RESERVE_U32(p->processes, p->processes_allocated,
				      (size_t)p->n_processes + 1, 256);
		if (r < 0)
			return r;
		proc = &p->processes[p->n_processes++];
		*proc = (ProfileProcess){ .pid = pid, .name = PROFILE_NONE, .label = PROFILE_NONE };
	}
	if (proc->label == PROFILE_NONE || (name_id != PROFILE_NONE && name_id != proc->name)) {
		char label[64];

		if (name_id != PROFILE_NONE)
			proc->name = name_id;
		snprintf(label, sizeof(label), "%s-%" PRIu32,
			 proc->name != PROFILE_NONE ? p->strings[proc->name] : "[unknown]", pid);
		r = profile_intern_string(p, label, &proc->label);
		if (r < 0)
			return r;
	}
	t = (ProfileThread *)profile_find_thread(p, tid);
	t->pid = pid;
	return 0;
}

int profile_append_process(Profile *p, uint32_t pid, uint32_t name, uint32_t label)
{
	int r;

	if ((name != PROFILE_NONE && name >= p->n_strings) || label >= p->n_strings)
		return -EINVAL;
	r = ARRAY_RESERVE_U32(p->processes, p->processes_allocated, (size_t)p->n_processes + 1, 256);
	if (r < 0)
		return r;
	p->processes[p->n_processes++] = (ProfileProcess){ .pid = pid, .name = name, .label = label };
	return 0;
}

uint32_t profile_thread_pid(const Profile *p, uint32_t tid)
{
	const ProfileThread *t = profile_find_thread(p, tid);

	return t && t->pid ? t->pid : p->pid;
}

int profile_intern_string_or_none(Profile *p, const char *s, uint32_t *ret)
{
	if (!s) {
		*ret = PROFILE_NONE;
		return 0;
	}
	return profile_intern_string(p, s, ret);
}

int profile_set_target(Profile *p, const char *target, const char *unit)
{
	uint32_t t, u;
	int r;

	r = profile_intern_string_or_none(p, target, &t);
	if (r >= 0)
		r = profile_intern_string_or_none(p, unit, &u);
	if (r < 0)
		return r;
	p->target = t;
	p->unit = u;
	return 0;
}
