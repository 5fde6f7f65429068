/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Samples joined with the stage spans and transitions of a live run (stage-join.h). */
#include "stage-join.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

enum { LABEL_STAGE, LABEL_STATE };

/* Groups a sample is counted in, as one number: stages, unstaged, states, stateless. */
#define GROUP_UNSTAGED _STAGE_MAX
#define GROUP_STATE(k) (_STAGE_MAX + 1 + (k))
#define GROUP_STATELESS GROUP_STATE(SPAN_RING_TRANSITIONS)
#define N_GROUPS (GROUP_STATELESS + 1)

typedef struct Counted {
	uint32_t group, function, module;
} Counted;

/* The intervals of one thread that are active at the current time, the latest begun on top. */
typedef struct ActiveHeap {
	const SpanInterval *iv;
	uint32_t *items;
	size_t n;
} ActiveHeap;

/* Whether interval a belongs above interval b: it began later (or as late, and ends sooner). */
static bool above(const SpanInterval *iv, uint32_t a, uint32_t b)
{
	if (iv[a].begin_ns != iv[b].begin_ns)
		return iv[a].begin_ns > iv[b].begin_ns;
	return iv[a].end_ns < iv[b].end_ns;
}

static void heap_push(ActiveHeap *h, uint32_t x)
{
	size_t i = h->n++;

	while (i > 0 && above(h->iv, x, h->items[(i - 1) / 2])) {
		h->items[i] = h->items[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->items[i] = x;
}

static void heap_pop(ActiveHeap *h)
{
	uint32_t x = h->items[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && above(h->iv, h->items[c + 1], h->items[c]))
			c++;
		if (!above(h->iv, h->items[c], x))
			break;
		h->items[i] = h->items[c];
		i = c;
	}
	if (h->n > 0)
		h->items[i] = x;
}

static int compare_intervals(const void *a, const void *b, void *userdata)
{
	const SpanInterval *iv = userdata;
	const SpanInterval *x = &iv[*(const uint32_t *)a], *y = &iv[*(const uint32_t *)b];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->begin_ns > y->begin_ns) - (x->begin_ns < y->begin_ns);
}

static int compare_samples(const void *a, const void *b, void *userdata)
{
	const ProfileSample *s = userdata;
	const ProfileSample *x = &s[*(const uint32_t *)a], *y = &s[*(const uint32_t *)b];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

static int compare_counted(const void *a, const void *b)
{
	const Counted *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	return (x->module > y->module) - (x->module < y->module);
}

/* The latest transition at or before 't', or -1. */
static ssize_t state_at(const SpanLog *log, uint64_t t)
{
	size_t lo = 0, hi = log->n_transitions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (log->transitions[mid].time_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

static JoinGroup *group_of(StageJoin *j, uint32_t g)
{
	if (g < _STAGE_MAX)
		return &j->stages[g];
	if (g == GROUP_UNSTAGED)
		return &j->unstaged;
	if (g == GROUP_STATELESS)
		return &j->stateless;
	return &j->states[g - GROUP_STATE(0)];
}

/* Keep a function's count among the group's hottest (most samples; equal ones in function order). */
static void offer_hot(JoinGroup *g, const HotFrame *f)
{
	size_t i = g->n_hottest < STAGE_JOIN_HOTTEST ? g->n_hottest++ : STAGE_JOIN_HOTTEST;

	if (i == STAGE_JOIN_HOTTEST) {
		if (f->samples <= g->hottest[STAGE_JOIN_HOTTEST - 1].samples)
			return;
		i = STAGE_JOIN_HOTTEST - 1;
	}
	for (; i > 0 && g->hottest[i - 1].samples < f->samples; i--)
		g->hottest[i] = g->hottest[i - 1];
	g->hottest[i] = *f;
}

/* The hottest leaf functions of each group, from every (group, function) a sample was counted in. */
static void count_hottest(StageJoin *j, Counted *c, size_t n)
{
	qsort(c, n, sizeof(*c), compare_counted);
	for (size_t i = 0; i < n;) {
		HotFrame f = { .function = c[i].function, .module = c[i].module };
		size_t k = i;

		while (k < n && compare_counted(&c[k], &c[i]) == 0)
			k++;
		f.samples = k - i;
		offer_hot(group_of(j, c[i].group), &f);
		i = k;
	}
}

static int add_markers(Profile *p, const SpanLog *log, uint64_t start_mono, const uint32_t *names,
		       uint64_t *ret)
{
	uint64_t n = 0;
	int r;

	for (size_t i = 0; i < log->n_intervals; i++) {
		const SpanInterval *iv = &log->intervals[i];
		ProfileMarker m = { .tid = iv->tid, .name = names[iv->stage] };

		if (iv->end_ns < start_mono)
			continue; /* over before the window */
		m.start_ns = iv->begin_ns > start_mono ? iv->begin_ns - start_mono : 0;
		m.end_ns = iv->end_ns - start_mono;
		r = profile_add_marker(p, &m);
		if (r < 0)
			return r;
		n++;
	}
	*ret = n;
	return 0;
}

int stage_join(Profile *p, const SpanLog *log, uint64_t start_mono, StageJoin *ret)
{
	static const char *const keys[] = { [LABEL_STAGE] = "stage", [LABEL_STATE] = "state" };
	_cleanup_free_ uint32_t *intervals = NULL, *samples = NULL, *active = NULL;
	_cleanup_free_ Counted *counted = NULL;
	uint32_t stage_names[_STAGE_MAX], state_names[_RUN_STATE_MAX];
	size_t n_counted = 0, next = 0;
	StageJoin j = { .n_samples = p->n_samples, .n_states = log->n_transitions };
	ActiveHeap heap = { .iv = log->intervals };
	int r;

	if (p->n_label_keys > 0)
		return -EBUSY;
	if (log->n_intervals >= UINT32_MAX || p->n_samples >= UINT32_MAX)
		return -E2BIG;
	r = profile_set_label_keys(p, keys, ELEMENTSOF(keys));
	if (r < 0)
		return r;
	for (Stage s = 0; s < _STAGE_MAX && r >= 0; s++)
		r = profile_intern_string(p, stage_to_string(s), &stage_names[s]);
	for (RunState s = 0; s < _RUN_STATE_MAX && r >= 0; s++)
		r = profile_intern_string(p, run_state_to_string(s), &state_names[s]);
	if (r < 0)
		return r;

	intervals = malloc((log->n_intervals + 1) * sizeof(uint32_t));
	active = malloc((log->n_intervals + 1) * sizeof(uint32_t));
	samples = malloc((p->n_samples + 1) * sizeof(uint32_t));
	counted = malloc((2 * p->n_samples + 1) * sizeof(Counted));
	if (!intervals || !active || !samples || !counted)
		return -ENOMEM;
	heap.items = active;
	for (size_t i = 0; i < log->n_intervals; i++)
		intervals[i] = (uint32_t)i;
	for (size_t i = 0; i < p->n_samples; i++)
		samples[i] = (uint32_t)i;
	qsort_r(intervals, log->n_intervals, sizeof(uint32_t), compare_intervals, log->intervals);
	qsort_r(samples, p->n_samples, sizeof(uint32_t), compare_samples, p->samples);

	for (size_t i = 0; i < p->n_samples; i++) {
		const ProfileSample *s = &p->samples[samples[i]];
		uint64_t t = start_mono + s->time_ns;
		uint32_t groups[2];
		ssize_t state;

		if (i == 0 || s->tid != p->samples[samples[i - 1]].tid) {
			/* a new thread: its intervals start at the first with its tid */
			heap.n = 0;
			while (next < log->n_intervals && log->intervals[intervals[next]].tid < s->tid)
				next++;
		}
		while (next < log->n_intervals && log->intervals[intervals[next]].tid == s->tid &&
		       log->intervals[intervals[next]].begin_ns <= t)
			heap_push(&heap, intervals[next++]);
		while (heap.n > 0 && log->intervals[heap.items[0]].end_ns < t)
			heap_pop(&heap);
		groups[0] = heap.n > 0 ? log->intervals[heap.items[0]].stage : GROUP_UNSTAGED;
		state = state_at(log, t);
		groups[1] = state >= 0 ? GROUP_STATE((uint32_t)state) : GROUP_STATELESS;
		if (groups[0] != GROUP_UNSTAGED)
			profile_set_sample_label(p, samples[i], LABEL_STAGE, stage_names[groups[0]]);
		if (state >= 0)
			profile_set_sample_label(p, samples[i], LABEL_STATE,
						 state_names[log->transitions[state].state]);
		for (size_t g = 0; g < ELEMENTSOF(groups); g++) {
			group_of(&j, groups[g])->samples++;
			if (s->stack != PROFILE_NONE) {
				const ProfileFrame *f = &p->frames[p->stacks[s->stack].frame];

				counted[n_counted++] = (Counted){ .group = groups[g],
								  .function = f->function,
								  .module = f->module };
			}
		}
	}
	count_hottest(&j, counted, n_counted);
	r = add_markers(p, log, start_mono, stage_names, &j.markers);
	if (r < 0)
		return r;
	*ret = j;
	return 0;
}
