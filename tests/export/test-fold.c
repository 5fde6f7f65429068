/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The folding against a naive reference (string sequences sorted the obvious
 * way), the folded text of a hand-made profile, format names, and that every
 * export is deterministic and the same through FILE, fd and memory.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"
#include "export.h"
#include "fold.h"
#include "synthetic-profile.h"
#include "test-util.h"

typedef struct NaiveStack {
	const char **names; /* root first */
	size_t depth;
	uint64_t count;
} NaiveStack;

static int compare_sequence(const NaiveStack *a, const NaiveStack *b)
{
	for (size_t i = 0; i < a->depth && i < b->depth; i++) {
		int c = strcmp(a->names[i], b->names[i]);

		if (c)
			return c;
	}
	return (a->depth > b->depth) - (a->depth < b->depth);
}

static int compare_naive_sequence(const void *a, const void *b)
{
	return compare_sequence(a, b);
}

static int compare_naive_hottest(const void *a, const void *b)
{
	const NaiveStack *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return compare_sequence(x, y);
}

/*
 * The folding (fold.h's rules), written as directly as possible: one name list per
 * sample, in a multi-process profile with the sample's process label first.
 */
static size_t naive_fold(const Profile *p, bool (*want)(const ProfileSample *, uint32_t), uint32_t tid,
			 NaiveStack **ret)
{
	NaiveStack *all = calloc(p->n_samples + 1, sizeof(NaiveStack));
	size_t n = 0, out = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		const ProfileSample *s = &p->samples[i];
		const ProfileProcess *proc = p->multi_process ?
			profile_find_process(p, profile_thread_pid(p, s->tid)) : NULL;
		size_t depth = proc ? 1 : 0;

		if (s->stack == PROFILE_NONE || (want && !want(s, tid)))
			continue;
		for (uint32_t node = s->stack; node != PROFILE_NONE; node = p->stacks[node].parent)
			depth++;
		all[n].names = calloc(depth, sizeof(char *));
		all[n].depth = depth;
		if (proc)
			all[n].names[0] = p->strings[proc->label];
		all[n].count = 1;
		for (uint32_t node = s->stack; node != PROFILE_NONE; node = p->stacks[node].parent)
			all[n].names[--depth] = p->strings[p->frames[p->stacks[node].frame].function];
		n++;
	}
	qsort(all, n, sizeof(NaiveStack), compare_naive_sequence);
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && compare_sequence(&all[out - 1], &all[i]) == 0) {
			all[out - 1].count++;
			free(all[i].names);
			continue;
		}
		all[out++] = all[i];
	}
	qsort(all, out, sizeof(NaiveStack), compare_naive_hottest);
	*ret = all;
	return out;
}

static bool sample_of_thread(const ProfileSample *s, uint32_t tid)
{
	return s->tid == tid;
}

static void free_naive(NaiveStack *stacks, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(stacks[i].names);
	free(stacks);
}

static void check_against_naive(const char *what, const Folding *f, const FoldCount *stacks,
				size_t n_stacks, const NaiveStack *naive, size_t n_naive)
{
	const Profile *p = f->profile;
	_cleanup_free_ uint32_t *path = malloc(((size_t)f->max_depth + 1) * sizeof(uint32_t));

	CHECK(n_stacks == n_naive, "%s: %zu folded stacks, naive folding has %zu", what, n_stacks,
	      n_naive);
	for (size_t i = 0; i < n_stacks && i < n_naive; i++) {
		uint32_t depth = fold_node_path(f, stacks[i].node, path);
		bool same = depth == naive[i].depth && stacks[i].count == naive[i].count;

		for (uint32_t d = 0; same && d < depth; d++)
			same = strcmp(p->strings[f->nodes[path[d]].function], naive[i].names[d]) == 0;
		CHECK(same,
		      "%s: stack %zu differs (count %llu vs %llu, depth %u vs %zu, leaf '%s' vs '%s')",
		      what, i, (unsigned long long)stacks[i].count,
		      (unsigned long long)naive[i].count, depth, naive[i].depth,
		      p->strings[f->nodes[stacks[i].node].function],
		      naive[i].depth ? naive[i].names[naive[i].depth - 1] : "");
		if (!same)
			return;
	}
}

static void test_folding(const char *what, SyntheticKind kind, size_t n_samples, uint32_t n_stacks)
{
	_cleanup_profile_ Profile *p = NULL;
	_cleanup_(folding_freep) Folding *f = NULL;
	NaiveStack *naive = NULL;
	uint64_t empty = 0, sum = 0;
	size_t n;

	CHECK(synthetic_profile(kind, n_samples, n_stacks, 11, &p) == 0, "%s: build", what);
	CHECK(fold_profile(p, &f) == 0, "%s: fold", what);
	if (!p || !f)
		return;
	for (size_t i = 0; i < p->n_samples; i++)
		empty += p->samples[i].stack == PROFILE_NONE;
	CHECK(f->n_empty == empty, "%s: %llu empty samples skipped, expected %llu", what,
	      (unsigned long long)f->n_empty, (unsigned long long)empty);
	CHECK(f->n_samples + f->n_empty == p->n_samples, "%s: samples lost", what);

	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const FoldNode *node = &f->nodes[f->node_of_rank[i]];

		CHECK(node->rank == i, "%s: node_of_rank[%u] has rank %u", what, i, node->rank);
		CHECK(node->parent == PROFILE_NONE || f->nodes[node->parent].rank < i,
		      "%s: rank %u comes before its parent", what, i);
	}
	n = naive_fold(p, NULL, 0, &naive);
	check_against_naive(what, f, f->stacks, f->n_stacks, naive, n);
	free_naive(naive, n);

	for (uint32_t t = 0; t < f->n_threads; t++) {
		const FoldThread *th = &f->threads[t];
		uint64_t leaf_sum = 0, stack_sum = 0;
		char label[64];

		CHECK(t == 0 || f->threads[t - 1].tid < th->tid, "%s: threads not ordered by tid",
		      what);
		for (size_t i = 0; i < th->n_leaves; i++)
			leaf_sum += th->leaves[i].count;
		for (size_t i = 0; i < th->n_stacks; i++)
			stack_sum += th->stacks[i].count;
		CHECK(leaf_sum == th->n_samples && stack_sum == th->n_samples,
		      "%s: thread %u sums %llu/%llu, expected %llu", what, th->tid,
		      (unsigned long long)leaf_sum, (unsigned long long)stack_sum,
		      (unsigned long long)th->n_samples);
		for (uint64_t i = 1; i < th->n_samples; i++)
			CHECK(p->samples[th->samples[i - 1]].time_ns <=
				      p->samples[th->samples[i]].time_ns,
			      "%s: thread %u samples out of time order", what, th->tid);
		snprintf(label, sizeof(label), "%s thread %u", what, th->tid);
		n = naive_fold(p, sample_of_thread, th->tid, &naive);
		check_against_naive(label, f, th->stacks, th->n_stacks, naive, n);
		free_naive(naive, n);
		sum += th->n_samples;
	}
	CHECK(sum == f->n_samples, "%s: threads cover %llu of %llu samples", what,
	      (unsigned long long)sum, (unsigned long long)f->n_samples);
}

static uint32_t add_frame(Profile *p, const char *name, uint32_t line)
{
	ProfileFrame frame = { .module = PROFILE_NONE, .build_id = PROFILE_NONE,
			       .file = PROFILE_NONE, .line = line, .address = 0x1000 + line };
	uint32_t id;

	if (profile_intern_string(p, name, &frame.function) < 0 ||
	    profile_intern_frame(p, &frame, &id) < 0)
		abort();
	return id;
}

static void add_samples(Profile *p, uint32_t tid, size_t count, size_t depth, ...)
{
	uint32_t frames[16], stack;
	va_list ap;

	va_start(ap, depth);
	for (size_t i = 0; i < depth; i++)
		frames[i] = va_arg(ap, uint32_t);
	va_end(ap);
	if (profile_intern_stack_leaf_first(p, frames, depth, &stack) < 0)
		abort();
	for (size_t i = 0; i < count; i++)
		if (profile_add_sample(p, tid, p->n_samples * 1000, depth ? stack : PROFILE_NONE) < 0)
			abort();
}

static void test_folded_text(void)
{
	static const char expected[] = "a 3\n"
				       "a;Z 2\n"
				       "a;b 2\n"
				       "a:x;new line 1\n"
				       "b 1\n";
	_cleanup_profile_ Profile *p = NULL;
	_cleanup_free_ char *data = NULL;
	uint32_t a1, a2, b, z, semi, nl;
	size_t size;
	int r;

	if (profile_new(&p) < 0)
		abort();
	a1 = add_frame(p, "a", 1);
	a2 = add_frame(p, "a", 2); /* same name, other line: folds with a1 */
	b = add_frame(p, "b", 3);
	z = add_frame(p, "Z", 4);
	semi = add_frame(p, "a;x", 5);
	nl = add_frame(p, "new\nline", 6);
	add_samples(p, 1, 2, 1, a1);
	add_samples(p, 2, 1, 1, a2);
	add_samples(p, 1, 2, 2, b, a1); /* leaf first */
	add_samples(p, 2, 2, 2, z, a2);
	add_samples(p, 1, 1, 2, nl, semi);
	add_samples(p, 2, 1, 1, b);
	add_samples(p, 1, 4, 0); /* empty stacks are skipped */

	r = export_profile_to_memory(p, EXPORT_FOLDED, &data, &size);
	CHECK(r == 0, "folded export: %s", strerror(-r));
	CHECK(r < 0 || (size == strlen(expected) && memcmp(data, expected, size) == 0),
	      "folded text differs:\n--- got\n%s--- expected\n%s", data ? data : "", expected);
}

static void test_formats(void)
{
	static const struct {
		const char *path;
		int r;
		ExportFormat format;
	} names[] = {
		{ "out.folded", 0, EXPORT_FOLDED },
		{ "/tmp/x.pb.gz", 0, EXPORT_PPROF },
		{ "a.b.json", 0, EXPORT_FIREFOX },
		{ "p.speedscope.json", 0, EXPORT_SPEEDSCOPE },
		{ "flame.svg", 0, EXPORT_SVG },
		{ "x.gz", -EINVAL, 0 },
		{ ".json", -EINVAL, 0 },
		{ "svg", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
	};
	_cleanup_profile_ Profile *p = NULL;
	FILE *f;

	for (int i = 0; i < _EXPORT_FORMAT_MAX; i++) {
		ExportFormat back = _EXPORT_FORMAT_MAX;
		const char *s = export_format_to_string(i);

		CHECK(s && export_format_from_string(s, &back) == 0 && back == (ExportFormat)i,
		      "format %d does not round-trip through '%s'", i, s ? s : "(null)");
	}
	CHECK(export_format_to_string(_EXPORT_FORMAT_MAX) == NULL, "out-of-range format has a name");
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		ExportFormat format = _EXPORT_FORMAT_MAX;
		int r = export_format_from_filename(names[i].path, &format);

		CHECK(r == names[i].r && (r < 0 || format == names[i].format),
		      "'%s': got %d/%d, expected %d/%d", names[i].path, r, format, names[i].r,
		      names[i].format);
	}
	{
		ExportFormat format = EXPORT_SVG;

		CHECK(export_format_from_string("bogus", &format) == -EINVAL && format == EXPORT_SVG,
		      "unknown format name accepted or output touched");
	}
	if (profile_new(&p) < 0)
		abort();
	f = fopen("/dev/null", "we");
	CHECK(export_profile(p, EXPORT_METRICS, f) == -EOPNOTSUPP, "metrics not refused");
	CHECK(export_profile(p, EXPORT_RECORD, f) == -EOPNOTSUPP, "record not refused");
	CHECK(export_profile(p, _EXPORT_FORMAT_MAX, f) == -EINVAL, "invalid format not refused");
	CHECK(export_format_is_profile(EXPORT_SVG) && !export_format_is_profile(EXPORT_RECORD),
	      "export_format_is_profile");
	fclose(f);
}

/* Every format twice through memory, once through an fd: identical bytes each time. */
static void test_deterministic(const char *what, const Profile *p)
{
	for (int format = 0; format < _EXPORT_FORMAT_MAX; format++) {
		_cleanup_free_ char *one = NULL, *two = NULL, *via_fd = NULL;
		_cleanup_close_ int fd = -1;
		size_t n1 = 0, n2 = 0;
		ssize_t n3;
		int r;

		if (!export_format_is_profile(format))
			continue;
		r = export_profile_to_memory(p, format, &one, &n1);
		CHECK(r == 0, "%s %s: %s", what, export_format_to_string(format), strerror(-r));
		r = export_profile_to_memory(p, format, &two, &n2);
		CHECK(r == 0 && n1 == n2 && memcmp(one, two, n1) == 0,
		      "%s %s: two exports differ (%zu vs %zu bytes)", what,
		      export_format_to_string(format), n1, n2);
		fd = memfd_create("export", MFD_CLOEXEC);
		r = export_profile_to_fd(p, format, fd);
		CHECK(r == 0, "%s %s to fd: %s", what, export_format_to_string(format), strerror(-r));
		via_fd = malloc(n1 + 1);
		n3 = pread(fd, via_fd, n1 + 1, 0);
		CHECK(n3 == (ssize_t)n1 && memcmp(via_fd, one, n1) == 0,
		      "%s %s: fd export differs from memory export (%zd vs %zu bytes)", what,
		      export_format_to_string(format), n3, n1);
		CHECK(n1 > 0, "%s %s: empty output", what, export_format_to_string(format));
		{
			_cleanup_(folding_freep) Folding *folding = NULL;
			_cleanup_free_ char *from_folding = NULL;
			size_t n4 = 0;
			FILE *m = open_memstream(&from_folding, &n4);

			r = fold_profile(p, &folding);
			CHECK(r == 0 && m && export_folding(folding, format, m) == 0,
			      "%s %s: export_folding failed", what, export_format_to_string(format));
			if (m)
				fclose(m);
			CHECK(n4 == n1 && from_folding && memcmp(from_folding, one, n1) == 0,
			      "%s %s: export_folding differs from export_profile", what,
			      export_format_to_string(format));
		}
	}
}

int main(void)
{
	_cleanup_profile_ Profile *mixed = NULL, *empty = NULL;

	test_formats();
	test_folded_text();
	test_folding("mixed", SYNTHETIC_MIXED, 0, 0);
	test_folding("hostile", SYNTHETIC_HOSTILE, 0, 0);
	test_folding("random", SYNTHETIC_RANDOM, 30000, 3000);
	test_folding("processes", SYNTHETIC_PROCESSES, 0, 0);

	if (synthetic_profile(SYNTHETIC_HOSTILE, 0, 0, 0, &mixed) < 0 || profile_new(&empty) < 0)
		abort();
	test_deterministic("hostile", mixed);
	/* an empty profile still gives well-formed files; folded is the one empty format */
	for (int format = 0; format < _EXPORT_FORMAT_MAX; format++) {
		_cleanup_free_ char *data = NULL;
		size_t size = 0;
		int r;

		if (!export_format_is_profile(format))
			continue;
		r = export_profile_to_memory(empty, format, &data, &size);
		CHECK(r == 0 && (format == EXPORT_FOLDED) == (size == 0),
		      "empty profile as %s: r=%d size=%zu", export_format_to_string(format), r, size);
	}
	if (test_failures == 0)
		printf("ok\n");
	return test_result();
}
