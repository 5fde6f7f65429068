/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fold.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "id-map.h"
#include "sorted.h"

Folding *folding_free(Folding *f)
{
	if (!f)
		return NULL;
	free(f->nodes);
	free(f->node_of_stack);
	free(f->node_of_rank);
	free(f->stacks);
	free(f->threads);
	free(f->sample_order);
	free(f->leaf_storage);
	free(f->stack_storage);
	free(f->leaf_name);
	id_map_free(f->names);
	free(f);
	return NULL;
}

uint32_t fold_node_path(const Folding *f, uint32_t node, uint32_t *ret_path)
{
	uint32_t depth = f->nodes[node].depth;

	for (uint32_t i = depth; i > 0; i--) {
		ret_path[i - 1] = node;
		node = f->nodes[node].parent;
	}
	return depth;
}

/* The name node (parent, function), added when new. */
static int intern_node(Folding *f, uint32_t parent, uint32_t function, uint32_t frame,
		       uint32_t *ret)
{
	uint32_t id;
	bool is_new;
	int r;

	r = id_map_intern(f->names, id_map_key(parent, function), &id, &is_new);
	if (r < 0)
		return r;
	if (is_new) {
		uint32_t depth = parent == PROFILE_NONE ? 1 : f->nodes[parent].depth + 1;

		r = ARRAY_RESERVE_U32(f->nodes, f->nodes_allocated, (size_t)id + 1, 64);
		if (r < 0)
			return r;
		f->nodes[id] = (FoldNode){
			.parent = parent, .function = function, .frame = frame, .depth = depth,
		};
		if (depth > f->max_depth)
			f->max_depth = depth;
		f->n_nodes++;
	}
	*ret = id;
	return 0;
}

/* Map every profile stack node to its name node. Parents precede children in
 * the profile (a node can only name an existing parent), so one pass suffices. */
static int build_nodes(Folding *f)
{
	const Profile *p = f->profile;
	int r;

	r = id_map_new(p->n_stacks, &f->names);
	if (r < 0)
		return r;
	f->node_of_stack = malloc(((size_t)p->n_stacks + 1) * sizeof(uint32_t));
	if (!f->node_of_stack)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_stacks; i++) {
		const ProfileStackNode *s = &p->stacks[i];
		uint32_t parent = s->parent == PROFILE_NONE ? PROFILE_NONE :
							      f->node_of_stack[s->parent];

		r = intern_node(f, parent, p->frames[s->frame].function, s->frame,
				&f->node_of_stack[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The name node of 'node' below the root node of a process: every name on its
 * path again, under the root. Roots have no parent and the process label as
 * name; the names below them all have a parent, so they never meet the names
 * of build_nodes().
 */
static int root_node(Folding *f, uint32_t root, uint32_t node, uint32_t *path, uint32_t *ret)
{
	uint32_t depth = fold_node_path(f, node, path), at = root;
	int r;

	for (uint32_t d = 0; d < depth; d++) {
		const FoldNode *n = &f->nodes[path[d]];

		r = intern_node(f, at, n->function, n->frame, &at);
		if (r < 0)
			return r;
	}
	*ret = at;
	return 0;
}

/*
 * Multi-process profiles: every thread's stacks start with a frame naming its
 * process ("comm-pid", as stackcollapse-perf --pid writes), so folded stacks
 * and flame graphs keep processes apart. Roots are attached per (thread, leaf):
 * the same code in two processes folds into two stacks.
 */
static int root_leaves(Folding *f)
{
	const Profile *p = f->profile;
	_cleanup_free_ uint32_t *path = NULL;
	size_t n_leaves = 0;
	int r;

	for (uint32_t t = 0; t < f->n_threads; t++)
		n_leaves += f->threads[t].n_leaves;
	f->leaf_name = malloc((n_leaves + 1) * sizeof(uint32_t));
	path = malloc(((size_t)f->max_depth + 1) * sizeof(uint32_t));
	if (!f->leaf_name || !path)
		return -ENOMEM;
	n_leaves = 0;
	for (uint32_t t = 0; t < f->n_threads; t++) {
		const FoldThread *th = &f->threads[t];
		const ProfileProcess *proc = profile_find_process(p, profile_thread_pid(p, th->tid));
		uint32_t root = PROFILE_NONE;

		if (proc && proc->label != PROFILE_NONE) {
			r = intern_node(f, PROFILE_NONE, proc->label, PROFILE_NONE, &root);
			if (r < 0)
				return r;
		}
		for (size_t i = 0; i < th->n_leaves; i++, n_leaves++) {
			uint32_t node = f->node_of_stack[th->leaves[i].node];

			if (root == PROFILE_NONE)
				f->leaf_name[n_leaves] = node;
			else {
				r = root_node(f, root, node, path, &f->leaf_name[n_leaves]);
				if (r < 0)
					return r;
			}
		}
	}
	return 0;
}

static int compare_strings(const void *a, const void *b, void *userdata)
{
	char *const *strings = userdata;

	return strcmp(strings[*(const uint32_t *)a], strings[*(const uint32_t *)b]);
}

static int compare_by_key(const void *a, const void *b, void *userdata)
{
	const uint32_t *key = userdata;
	uint32_t x = key[*(const uint32_t *)a], y = key[*(const uint32_t *)b];

	return (x > y) - (x < y);
}

/*
 * Rank name nodes in lexicographic order of their root-first name sequences:
 * the preorder of the name tree with siblings sorted by name is that order,
 * since a prefix sorts before its extensions.
 */
static int rank_nodes(Folding *f)
{
	const Profile *p = f->profile;
	_cleanup_free_ uint32_t *name_rank = NULL, *names = NULL, *first = NULL, *children = NULL,
				*todo = NULL;
	uint32_t n_names = 0, n_todo = 0, next_rank = 0, n = f->n_nodes;

	/* Rank the distinct names once, so sibling sorting compares integers. */
	name_rank = malloc(((size_t)p->n_strings + 1) * sizeof(uint32_t));
	names = malloc(((size_t)n + 1) * sizeof(uint32_t));
	first = calloc((size_t)n + 2, sizeof(uint32_t));
	children = malloc(((size_t)n + 1) * sizeof(uint32_t));
	todo = malloc(((size_t)n + 1) * sizeof(uint32_t));
	f->node_of_rank = malloc(((size_t)n + 1) * sizeof(uint32_t));
	if (!name_rank || !names || !first || !children || !todo || !f->node_of_rank)
		return -ENOMEM;
	memset(name_rank, 0xff, (size_t)p->n_strings * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t fn = f->nodes[i].function;

		if (name_rank[fn] == PROFILE_NONE) {
			name_rank[fn] = 0;
			names[n_names++] = fn;
		}
	}
	if (n_names > 1) /* qsort must not see the NULL array of an empty profile */
		qsort_r(names, n_names, sizeof(uint32_t), compare_strings, p->strings);
	for (uint32_t i = 0; i < n_names; i++)
		name_rank[names[i]] = i;

	/* Children lists, the roots under the pseudo-parent n; slot n + 1 ends the last list. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t parent = f->nodes[i].parent;

		first[(parent == PROFILE_NONE ? n : parent) + 1]++;
	}
	for (uint32_t i = 1; i <= n + 1; i++)
		first[i] += first[i - 1];
	{
		_cleanup_free_ uint32_t *fill = malloc(((size_t)n + 1) * sizeof(uint32_t));
		_cleanup_free_ uint32_t *key = malloc(((size_t)n + 1) * sizeof(uint32_t));

		if (!fill || !key)
			return -ENOMEM;
		memcpy(fill, first, ((size_t)n + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < n; i++) {
			uint32_t parent = f->nodes[i].parent;

			children[fill[parent == PROFILE_NONE ? n : parent]++] = i;
			key[i] = name_rank[f->nodes[i].function];
		}
		for (uint32_t i = 0; i <= n; i++)
			if (first[i + 1] - first[i] > 1)
				qsort_r(children + first[i], first[i + 1] - first[i], sizeof(uint32_t),
					compare_by_key, key);
	}

	/* Preorder walk: push children in reverse so the smallest pops first. */
	for (uint32_t c = first[n + 1]; c > first[n]; c--)
		todo[n_todo++] = children[c - 1];
	while (n_todo > 0) {
		uint32_t node = todo[--n_todo];

		f->node_of_rank[next_rank] = node;
		f->nodes[node].rank = next_rank++;
		for (uint32_t c = first[node + 1]; c > first[node]; c--)
			todo[n_todo++] = children[c - 1];
	}
	return 0;
}

DEFINE_RADIX_SORT(radix_sort, uint64_t, *item)

static int compare_hottest(const void *a, const void *b, void *userdata)
{
	const FoldCount *x = a, *y = b;
	const FoldNode *nodes = userdata;
	uint32_t rx = nodes[x->node].rank, ry = nodes[y->node].rank;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (rx > ry) - (rx < ry);
}

/* Hottest first, then lexicographic: one integer key per entry, radix sorted. */
static void sort_hottest(const Folding *f, FoldCount *a, size_t n, uint64_t *keys, uint64_t *tmp)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].count >= UINT32_MAX) {
			/* beyond what the key holds: sort the slow way */
			qsort_r(a, n, sizeof(FoldCount), compare_hottest, f->nodes);
			return;
		}
		keys[i] = (uint64_t)(UINT32_MAX - a[i].count) << 32 | f->nodes[a[i].node].rank;
	}
	radix_sort(keys, tmp, n);
	for (size_t i = 0; i < n; i++)
		a[i] = (FoldCount){
			.node = f->node_of_rank[keys[i] & UINT32_MAX],
			.count = UINT32_MAX - (keys[i] >> 32),
		};
}

static int compare_sample_time(const void *a, const void *b, void *userdata)
{
	const ProfileSample *samples = userdata;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (samples[i].time_ns != samples[j].time_ns)
		return samples[i].time_ns < samples[j].time_ns ? -1 : 1;
	return (i > j) - (i < j);
}

static int compare_tid(const void *a, const void *b)
{
	const FoldThread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/*
 * Accumulate counts into a dense array and remember which slots were touched,
 * so each thread costs its own samples, not the size of the profile.
 */
typedef struct Tally {
	uint64_t *count;
	uint32_t *touched;
	uint32_t n_touched;
} Tally;

static void tally_add(Tally *t, uint32_t slot, uint64_t n)
{
	if (t->count[slot] == 0)
		t->touched[t->n_touched++] = slot;
	t->count[slot] += n;
}

/* Move the tally into out[] (which must have room for n_touched) and reset it. */
static size_t tally_take(Tally *t, FoldCount *out)
{
	size_t n = t->n_touched;

	for (uint32_t i = 0; i < t->n_touched; i++) {
		uint32_t slot = t->touched[i];

		out[i] = (FoldCount){ .node = slot, .count = t->count[slot] };
		t->count[slot] = 0;
	}
	t->n_touched = 0;
	return n;
}

/* What the phases of count_leaves() hand on: one entry per sample of the profile. */
typedef struct LeafScratch {
	uint32_t *thread_of_sample; /* the thread index of each counted sample */
	uint64_t *keys, *tmp;       /* (thread << 32 | leaf node) per counted sample, to sort */
	bool *unsorted;             /* per thread: its samples arrived out of time order */
	uint32_t n_threads;
} LeafScratch;

static void leaf_scratch_done(LeafScratch *x)
{
	free(x->thread_of_sample);
	free(x->keys);
	free(x->tmp);
	free(x->unsorted);
}

/* Which thread each counted sample belongs to, threads in order of appearance. */
static int assign_threads(Folding *f, LeafScratch *x)
{
	const Profile *p = f->profile;
	_cleanup_(id_map_freep) IdMap *tids = NULL;
	_cleanup_free_ uint64_t *last_time = NULL;
	uint32_t last_tid = 0, last_thread = PROFILE_NONE;
	int r;

	r = id_map_new(64, &tids);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->n_samples; i++) {
		const ProfileSample *s = &p->samples[i];
		uint32_t t;
		bool is_new = false;

		if (s->stack == PROFILE_NONE) {
			f->n_empty++;
			continue;
		}
		/* samples come in runs of one thread: skip the lookup then */
		if (s->tid == last_tid && last_thread != PROFILE_NONE)
			t = last_thread;
		else {
			r = id_map_intern(tids, s->tid, &t, &is_new);
			if (r < 0)
				return r;
		}
		if (is_new) {
			FoldThread *a = reallocarray(f->threads, t + 1, sizeof(FoldThread));
			uint64_t *lt = reallocarray(last_time, t + 1, sizeof(uint64_t));
			bool *u = reallocarray(x->unsorted, t + 1, sizeof(bool));

			if (a)
				f->threads = a;
			if (lt)
				last_time = lt;
			if (u)
				x->unsorted = u;
			if (!a || !lt || !u)
				return -ENOMEM;
			f->threads[t] = (FoldThread){ .tid = s->tid };
			last_time[t] = 0;
			x->unsorted[t] = false;
		}
		last_tid = s->tid;
		last_thread = t;
		if (s->time_ns < last_time[t])
			x->unsorted[t] = true;
		last_time[t] = s->time_ns;
		f->threads[t].n_samples++;
		x->thread_of_sample[i] = t;
		x->keys[f->n_samples++] = (uint64_t)t << 32 | s->stack;
	}
	x->n_threads = id_map_size(tids);
	return 0;
}

/* Group the counted samples by thread (a stable counting sort), each in time order. */
static int order_samples(Folding *f, const LeafScratch *x)
{
	const Profile *p = f->profile;
	_cleanup_free_ uint32_t *fill = NULL;

	f->sample_order = malloc((f->n_samples + 1) * sizeof(uint32_t));
	fill = malloc(((size_t)x->n_threads + 1) * sizeof(uint32_t));
	if (!f->sample_order || !fill)
		return -ENOMEM;
	for (uint32_t t = 0, at = 0; t < x->n_threads; t++) {
		fill[t] = at;
		f->threads[t].samples = f->sample_order + at;
		at += f->threads[t].n_samples;
	}
	for (size_t i = 0; i < p->n_samples; i++)
		if (p->samples[i].stack != PROFILE_NONE)
			f->sample_order[fill[x->thread_of_sample[i]]++] = i;
	/* Timelines must run forward; samples usually arrive in order already. */
	for (uint32_t t = 0; t < x->n_threads; t++)
		if (x->unsorted[t])
			qsort_r((uint32_t *)f->threads[t].samples, f->threads[t].n_samples,
				sizeof(uint32_t), compare_sample_time, p->samples);
	return 0;
}

/*
 * Counts per (thread, leaf node): sorting one key per sample streams through
 * memory, where counting into an array would miss the cache on every sample.
 */
static int count_leaf_runs(Folding *f, LeafScratch *x)
{
	size_t n_leaves = 0;

	f->leaf_storage = malloc((f->n_samples + 1) * sizeof(FoldCount));
	if (!f->leaf_storage)
		return -ENOMEM;
	radix_sort(x->keys, x->tmp, f->n_samples);
	for (size_t k = 0; k < f->n_samples;) {
		size_t run = k + 1;

		while (run < f->n_samples && x->keys[run] == x->keys[k])
			run++;
		f->leaf_storage[n_leaves++] = (FoldCount){
			.node = x->keys[k] & UINT32_MAX, .count = run - k,
		};
		f->threads[x->keys[k] >> 32].n_leaves++;
		k = run;
	}
	n_leaves = 0;
	for (uint32_t t = 0; t < x->n_threads; t++) {
		f->threads[t].leaves = f->leaf_storage + n_leaves;
		n_leaves += f->threads[t].n_leaves;
	}
	return 0;
}

/* Group the counted samples by thread (time order) and count each thread's leaf stack nodes. */
static int count_leaves(Folding *f)
{
	const Profile *p = f->profile;
	_cleanup_(leaf_scratch_done) LeafScratch x = {};
	int r;

	/* sample indexes are kept as 32-bit numbers */
	if (p->n_samples >= UINT32_MAX)
		return -E2BIG;
	x.thread_of_sample = malloc((p->n_samples + 1) * sizeof(uint32_t));
	x.keys = malloc((p->n_samples + 1) * sizeof(uint64_t));
	x.tmp = malloc((p->n_samples + 1) * sizeof(uint64_t));
	if (!x.thread_of_sample || !x.keys || !x.tmp)
		return -ENOMEM;
	r = assign_threads(f, &x);
	if (r >= 0)
		r = order_samples(f, &x);
	if (r >= 0)
		r = count_leaf_runs(f, &x);
	if (r < 0)
		return r;
	f->n_threads = x.n_threads;
	return 0;
}

/* Each thread's name sequences from its leaves, hottest first; then all threads merged. */
static int count_stacks(Folding *f)
{
	size_t n_slots = (size_t)(f->profile->n_stacks > f->n_nodes ? f->profile->n_stacks
								    : f->n_nodes) + 1;
	size_t n_keys = n_slots > f->n_samples ? n_slots : f->n_samples + 1;
	_cleanup_free_ uint32_t *touched = malloc(n_slots * sizeof(uint32_t));
	_cleanup_free_ uint64_t *count = calloc(n_slots, sizeof(uint64_t));
	_cleanup_free_ uint64_t *keys = malloc(n_keys * sizeof(uint64_t));
	_cleanup_free_ uint64_t *tmp = malloc(n_keys * sizeof(uint64_t));
	Tally tally = { .count = count, .touched = touched };
	size_t n_stacks = 0;

	f->stack_storage = malloc((f->n_samples + 1) * sizeof(FoldCount));
	if (!touched || !count || !keys || !tmp || !f->stack_storage)
		return -ENOMEM;
	for (uint32_t t = 0; t < f->n_threads; t++) {
		FoldThread *th = &f->threads[t];
		FoldCount *stacks = f->stack_storage + n_stacks;
		size_t first_leaf = (size_t)(th->leaves - f->leaf_storage);

		for (size_t i = 0; i < th->n_leaves; i++)
			tally_add(&tally, f->leaf_name ? f->leaf_name[first_leaf + i] :
							 f->node_of_stack[th->leaves[i].node],
				  th->leaves[i].count);
		th->n_stacks = tally_take(&tally, stacks);
		sort_hottest(f, stacks, th->n_stacks, keys, tmp);
		th->stacks = stacks;
		n_stacks += th->n_stacks;
	}

	/* Merged: every thread's name sequences added up. */
	for (uint32_t t = 0; t < f->n_threads; t++)
		for (size_t i = 0; i < f->threads[t].n_stacks; i++)
			tally_add(&tally, f->threads[t].stacks[i].node, f->threads[t].stacks[i].count);
	f->stacks = malloc(((size_t)tally.n_touched + 1) * sizeof(FoldCount));
	if (!f->stacks)
		return -ENOMEM;
	f->n_stacks = tally_take(&tally, f->stacks);
	sort_hottest(f, f->stacks, f->n_stacks, keys, tmp);

	if (f->n_threads > 1)
		qsort(f->threads, f->n_threads, sizeof(FoldThread), compare_tid);
	return 0;
}

int fold_profile(const Profile *p, Folding **ret)
{
	_cleanup_(folding_freep) Folding *f = NULL;
	int r;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->profile = p;
	r = build_nodes(f);
	if (r >= 0)
		r = count_leaves(f);
	if (r >= 0 && p->multi_process)
		r = root_leaves(f);
	/* ranks once every name node exists; the stacks are sorted by them */
	if (r >= 0)
		r = rank_nodes(f);
	if (r >= 0)
		r = count_stacks(f);
	if (r < 0)
		return r;
	f->names = id_map_free(f->names);
	*ret = TAKE_PTR(f);
	return 0;
}
