/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "hash.h"

/*
 * One open-addressing table of ids per interned kind. The table holds only
 * ids; hashing and equality look at the profile's arrays, so an entry costs
 * four bytes and rehashing needs no key copies.
 */
struct ProfileIndex {
	uint32_t *slots; /* PROFILE_NONE marks an empty slot */
	uint32_t mask;
	uint32_t count;
	uint64_t (*hash)(const Profile *p, uint32_t id);
};

/* FNV-1a, the length mixed in: a string's bytes need not end in NUL here. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	return hash_combine(hash_fnv1a(HASH_FNV1A_BASIS, s, len), len);
}

static uint64_t hash_string_id(const Profile *p, uint32_t id)
{
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

static uint64_t hash_frame_id(const Profile *p, uint32_t id)
{
	return hash_frame(&p->frames[id]);
}

static uint64_t hash_stack(uint32_t parent, uint32_t frame)
{
	return hash_combine(hash_combine(0, parent), frame);
}

static uint64_t hash_stack_id(const Profile *p, uint32_t id)
{
	return hash_stack(p->stacks[id].parent, p->stacks[id].frame);
}

static int index_new(uint64_t (*hash)(const Profile *, uint32_t), ProfileIndex **ret)
{
	_cleanup_free_ ProfileIndex *idx = calloc(1, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	idx->mask = 1023;
	idx->slots = malloc((idx->mask + 1) * sizeof(uint32_t));
	if (!idx->slots)
		return -ENOMEM;
	memset(idx->slots, 0xff, (idx->mask + 1) * sizeof(uint32_t));
	idx->hash = hash;
	*ret = TAKE_PTR(idx);
	return 0;
}

static void index_free(ProfileIndex *idx)
{
	if (!idx)
		return;
	free(idx->slots);
	free(idx);
}

/* Make room for one more id, keeping the load factor at or below one half. */
static int index_reserve(const Profile *p, ProfileIndex *idx)
{
	uint32_t new_mask, *slots;

	if ((idx->count + 1) * 2 <= idx->mask + 1)
		return 0;
	if (idx->mask >= UINT32_MAX / 4)
		return -E2BIG;
	new_mask = idx->mask * 2 + 1;
	slots = malloc(((size_t)new_mask + 1) * sizeof(uint32_t));
	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, ((size_t)new_mask + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i <= idx->mask; i++) {
		uint32_t id = idx->slots[i], s;

		if (id == PROFILE_NONE)
			continue;
		for (s = idx->hash(p, id) & new_mask; slots[s] != PROFILE_NONE; s = (s + 1) & new_mask)
			;
		slots[s] = id;
	}
	free(idx->slots);
	idx->slots = slots;
	idx->mask = new_mask;
	return 0;
}

static int grow(void **array, uint32_t *allocated, uint32_t used, size_t size)
{
	uint32_t n;
	void *a;

	if (used < *allocated)
		return 0;
	if (*allocated >= UINT32_MAX / 2)
		return -E2BIG;
	n = *allocated ? *allocated * 2 : 256;
	a = reallocarray(*array, n, size);
	if (!a)
		return -ENOMEM;
	*array = a;
	*allocated = n;
	return 0;
}

int profile_new(Profile **ret)
{
	_cleanup_profile_ Profile *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	r = index_new(hash_string_id, &p->string_index);
	if (r < 0)
		return r;
	r = index_new(hash_frame_id, &p->frame_index);
	if (r < 0)
		return r;
	r = index_new(hash_stack_id, &p->stack_index);
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
	index_free(p->string_index);
	index_free(p->frame_index);
	index_free(p->stack_index);
	free(p);
	return NULL;
}

void profile_freep(Profile **p)
{
	profile_free(*p);
}

const char *profile_string(const Profile *p, uint32_t id)
{
	if (id >= p->n_strings)
		return NULL;
	return p->strings[id];
}

int profile_intern_string_len(Profile *p, const char *s, size_t len, uint32_t *ret)
{
	ProfileIndex *idx = p->string_index;
	uint32_t slot;
	char *copy;
	int r;

	r = index_reserve(p, idx);
	if (r < 0)
		return r;
	for (slot = hash_bytes(s, len) & idx->mask; idx->slots[slot] != PROFILE_NONE;
	     slot = (slot + 1) & idx->mask) {
		const char *t = p->strings[idx->slots[slot]];

		if (strncmp(t, s, len) == 0 && t[len] == '\0') {
			*ret = idx->slots[slot];
			return 0;
		}
	}
	r = grow((void **)&p->strings, &p->strings_allocated, p->n_strings, sizeof(char *));
	if (r < 0)
		return r;
	copy = strndup(s, len);
	if (!copy)
		return -ENOMEM;
	p->strings[p->n_strings] = copy;
	idx->slots[slot] = p->n_strings;
	idx->count++;
	*ret = p->n_strings++;
	return 0;
}

int profile_intern_string(Profile *p, const char *s, uint32_t *ret)
{
	return profile_intern_string_len(p, s, strlen(s), ret);
}

static bool frame_equal(const ProfileFrame *a, const ProfileFrame *b)
{
	return a->function == b->function && a->module == b->module && a->build_id == b->build_id &&
	       a->file == b->file && a->line == b->line && a->address == b->address &&
	       a->inlined == b->inlined && a->kernel == b->kernel;
}

int profile_intern_frame(Profile *p, const ProfileFrame *frame, uint32_t *ret)
{
	ProfileIndex *idx = p->frame_index;
	uint32_t slot;
	int r;

	r = index_reserve(p, idx);
	if (r < 0)
		return r;
	for (slot = hash_frame(frame) & idx->mask; idx->slots[slot] != PROFILE_NONE;
	     slot = (slot + 1) & idx->mask)
		if (frame_equal(&p->frames[idx->slots[slot]], frame)) {
			*ret = idx->slots[slot];
			return 0;
		}
	r = grow((void **)&p->frames, &p->frames_allocated, p->n_frames, sizeof(ProfileFrame));
	if (r < 0)
		return r;
	p->frames[p->n_frames] = *frame;
	idx->slots[slot] = p->n_frames;
	idx->count++;
	*ret = p->n_frames++;
	return 0;
}

int profile_intern_stack(Profile *p, uint32_t parent, uint32_t frame, uint32_t *ret)
{
	ProfileIndex *idx = p->stack_index;
	uint32_t slot;
	int r;

	if (frame >= p->n_frames || (parent != PROFILE_NONE && parent >= p->n_stacks))
		return -EINVAL;
	r = index_reserve(p, idx);
	if (r < 0)
		return r;
	for (slot = hash_stack(parent, frame) & idx->mask; idx->slots[slot] != PROFILE_NONE;
	     slot = (slot + 1) & idx->mask) {
		const ProfileStackNode *n = &p->stacks[idx->slots[slot]];

		if (n->parent == parent && n->frame == frame) {
			*ret = idx->slots[slot];
			return 0;
		}
	}
	r = grow((void **)&p->stacks, &p->stacks_allocated, p->n_stacks, sizeof(ProfileStackNode));
	if (r < 0)
		return r;
	p->stacks[p->n_stacks] = (ProfileStackNode){ .parent = parent, .frame = frame };
	idx->slots[slot] = p->n_stacks;
	idx->count++;
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
		size_t n = p->samples_allocated ? p->samples_allocated * 2 : 4096;
		ProfileSample *a = reallocarray(p->samples, n, sizeof(ProfileSample));

		if (!a)
			return -ENOMEM;
		p->samples = a;
		p->samples_allocated = n;
	}
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
		r = grow((void **)&p->threads, &p->threads_allocated, p->n_threads, sizeof(ProfileThread));
		if (r < 0)
			return r;
		t = &p->threads[p->n_threads++];
		t->tid = tid;
		t->name = PROFILE_NONE;
	}
	if (name_id != PROFILE_NONE)
		t->name = name_id;
	return 0;
}
