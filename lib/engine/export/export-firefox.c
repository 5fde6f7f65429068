/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Firefox Profiler's Gecko profile format (meta.version 36, the newest
 * its importer accepts): one thread per tid with its sample timeline, grouped
 * into processes by pid (a multi-process profile has many). The
 * samples are the folding's counted samples of that thread, their stacks the
 * profile's own stack nodes (root first, parents before children), so frames
 * keep their line. Native frames are written as "name (in module) (file:line)"
 * or "name (in module)", the location syntax the importer parses into a
 * function and a library (line breaks in names become spaces, as in folded
 * stacks, because the importer's patterns are line-bound); categories tell
 * kernel from user code. Markers (a live run's stage spans) are interval
 * markers on their thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "export-writers.h"
#include "text-escape.h"

enum { CATEGORY_OTHER, CATEGORY_USER, CATEGORY_KERNEL };

typedef struct ThreadTables {
	uint32_t *local_stack; /* profile stack node -> thread-local index, PROFILE_NONE if unused */
	uint32_t *local_frame; /* profile frame -> thread-local index */
	uint32_t *stacks;      /* thread-local stack index -> profile stack node */
	uint32_t *frames;      /* thread-local frame index -> profile frame */
	uint32_t n_stacks, n_frames;
	const ProfileMarker **markers; /* the profile's markers by tid, then start */
} ThreadTables;

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The stack nodes and frames one thread uses; stack indexes keep the profile's order, so
 * a prefix still comes before the stacks that extend it. */
static void collect_tables(const Folding *f, const FoldThread *th, ThreadTables *t)
{
	const Profile *p = f->profile;

	t->n_stacks = t->n_frames = 0;
	for (size_t i = 0; i < th->n_leaves; i++)
		for (uint32_t n = th->leaves[i].node;
		     n != PROFILE_NONE && t->local_stack[n] == PROFILE_NONE; n = p->stacks[n].parent) {
			t->local_stack[n] = 0;
			t->stacks[t->n_stacks++] = n;
		}
	if (t->n_stacks > 1)
		qsort(t->stacks, t->n_stacks, sizeof(uint32_t), compare_u32);
	for (uint32_t i = 0; i < t->n_stacks; i++) {
		uint32_t frame = p->stacks[t->stacks[i]].frame;

		t->local_stack[t->stacks[i]] = i;
		if (t->local_frame[frame] == PROFILE_NONE) {
			t->local_frame[frame] = t->n_frames;
			t->frames[t->n_frames++] = frame;
		}
	}
}

static void reset_tables(const Profile *p, ThreadTables *t)
{
	for (uint32_t i = 0; i < t->n_stacks; i++)
		t->local_stack[t->stacks[i]] = PROFILE_NONE;
	for (uint32_t i = 0; i < t->n_frames; i++)
		t->local_frame[t->frames[i]] = PROFILE_NONE;
}

/* Milliseconds with nanosecond precision, without going through a double. */
static void write_ms(FILE *out, uint64_t ns)
{
	write_u64(out, ns / 1000000);
	fprintf(out, ".%06u", (unsigned)(ns % 1000000));
}

static void write_location(const Profile *p, const ProfileFrame *frame, FILE *out)
{
	_cleanup_free_ char *location = NULL;
	const char *name = p->strings[frame->function];
	int r;

	if (frame->module == PROFILE_NONE)
		r = asprintf(&location, "%s", name);
	else if (frame->file != PROFILE_NONE)
		r = asprintf(&location, "%s (in %s) (%s:%u)", name,
			     basename_of(p->strings[frame->module]), p->strings[frame->file],
			     frame->line);
	else
		r = asprintf(&location, "%s (in %s)", name, basename_of(p->strings[frame->module]));
	if (r < 0)
		location = NULL;
	/* the importer parses locations with line-bound patterns */
	for (char *c = location; c && *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	write_json_string(out, location ? location : name);
}

static int compare_markers(const void *a, const void *b)
{
	const ProfileMarker *x = *(const ProfileMarker *const *)a, *y = *(const ProfileMarker *const *)b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* The markers of thread 'tid': t->markers[*ret_first ...] (sorted by tid). */
static void collect_markers(const Profile *p, uint32_t tid, const ThreadTables *t,
			    size_t *ret_first, size_t *ret_n)
{
	size_t lo = 0, hi = p->n_markers, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->markers[mid]->tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < p->n_markers && t->markers[end]->tid == tid; end++)
		;
	*ret_first = lo;
	*ret_n = end - lo;
}

/*
 * Interval markers (phase 1) of a thread, e.g. a live run's stage spans. A
 * marker's name is its own string after the frames' locations.
 */
static void write_markers(const ProfileMarker *const *markers, size_t n, uint32_t first_string,
			  FILE *out)
{
	fputs_unlocked("\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
		       "\"category\":4,\"data\":5},\"data\":[", out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s[%zu,", i ? "," : "", first_string + i);
		write_ms(out, markers[i]->start_ns);
		putc_unlocked(',', out);
		write_ms(out, markers[i]->end_ns);
		fprintf(out, ",1,%d,null]", CATEGORY_OTHER);
	}
	fputs_unlocked("]},", out);
}

static void write_thread(const Folding *f, const FoldThread *th, ThreadTables *t, FILE *out)
{
	const Profile *p = f->profile;
	const ProfileThread *info = profile_find_thread(p, th->tid), *main_thread;
	uint32_t pid = profile_thread_pid(p, th->tid);
	const ProfileProcess *proc = profile_find_process(p, pid);
	size_t first_marker, n_markers;

	collect_tables(f, th, t);

	fputs_unlocked("{\"name\":", out);
	if (info && info->name != PROFILE_NONE)
		write_json_string(out, p->strings[info->name]);
	else
		fprintf(out, "\"tid %u\"", th->tid);
	/*
	 * The importer groups threads into processes by pid; a process is named
	 * as recorded, else after its main thread, whose tid is the pid.
	 */
	fputs_unlocked(",\"processType\":\"default\",\"processName\":", out);
	main_thread = profile_find_thread(p, pid);
	write_json_string(out, proc && proc->name != PROFILE_NONE ? p->strings[proc->name] :
			       main_thread && main_thread->name != PROFILE_NONE ?
			       p->strings[main_thread->name] : "");
	fprintf(out, ",\"registerTime\":0,\"unregisterTime\":null,\"tid\":%u,\"pid\":%u,", th->tid,
		pid);
	collect_markers(p, th->tid, t, &first_marker, &n_markers);
	write_markers(t->markers + first_marker, n_markers, t->n_frames, out);

	fputs_unlocked("\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2},"
		       "\"data\":[", out);
	for (uint64_t i = 0; i < th->n_samples; i++) {
		const ProfileSample *s = &p->samples[th->samples[i]];

		fputs_unlocked(i ? ",[" : "[", out);
		write_u64(out, t->local_stack[s->stack]);
		putc_unlocked(',', out);
		write_ms(out, s->time_ns);
		fputs_unlocked(",0]", out);
	}
	fputs_unlocked("]},", out);

	fputs_unlocked("\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
		       "\"innerWindowID\":2,\"implementation\":3,\"line\":4,\"column\":5,"
		       "\"category\":6,\"subcategory\":7},"
		       "\"data\":[", out);
	for (uint32_t i = 0; i < t->n_frames; i++) {
		const ProfileFrame *frame = &p->frames[t->frames[i]];

		fprintf(out, "%s[%u,false,0,null,", i ? "," : "", i);
		if (frame->line)
			fprintf(out, "%u", frame->line);
		else
			fputs_unlocked("null", out);
		fprintf(out, ",null,%d,0]", frame->kernel ? CATEGORY_KERNEL : CATEGORY_USER);
	}
	fputs_unlocked("]},", out);

	fputs_unlocked("\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[", out);
	for (uint32_t i = 0; i < t->n_stacks; i++) {
		const ProfileStackNode *node = &p->stacks[t->stacks[i]];

		fputs_unlocked(i ? ",[" : "[", out);
		if (node->parent == PROFILE_NONE)
			fputs_unlocked("null", out);
		else
			write_u64(out, t->local_stack[node->parent]);
		putc_unlocked(',', out);
		write_u64(out, t->local_frame[node->frame]);
		putc_unlocked(']', out);
	}
	fputs_unlocked("]},", out);

	/* string i is the location of frame i; then the names of the markers, one each */
	fputs_unlocked("\"stringTable\":[", out);
	for (uint32_t i = 0; i < t->n_frames; i++) {
		if (i)
			putc_unlocked(',', out);
		write_location(p, &p->frames[t->frames[i]], out);
	}
	for (size_t i = 0; i < n_markers; i++) {
		if (i || t->n_frames)
			putc_unlocked(',', out);
		write_json_string(out, p->strings[t->markers[first_marker + i]->name]);
	}
	fputs_unlocked("]}", out);

	reset_tables(p, t);
}

/*
 * "profd VERSION (what was profiled)"; a profile without sample times (the bpf
 * backend counts stacks) says so, since its samples all sit at time 0.
 */
static int write_product(const Profile *p, FILE *out)
{
	_cleanup_free_ char *product = NULL, *target = NULL;

	if (p->target != PROFILE_NONE)
		target = strdup(p->strings[p->target]);
	else if (asprintf(&target, "pid %u", p->pid) < 0)
		target = NULL;
	if (!target || asprintf(&product, "profd %s (%s)%s", PROFD_VERSION, target,
				p->untimed ? ", counts only: no timeline" : "") < 0)
		return -ENOMEM;
	write_json_string(out, product);
	return 0;
}

int export_write_firefox(const Folding *f, FILE *out)
{
	const Profile *p = f->profile;
	size_t n_stacks = (size_t)p->n_stacks + 1, n_frames = (size_t)p->n_frames + 1;
	_cleanup_free_ uint32_t *local_stack = malloc(n_stacks * sizeof(uint32_t));
	_cleanup_free_ uint32_t *local_frame = malloc(n_frames * sizeof(uint32_t));
	_cleanup_free_ uint32_t *stacks = malloc(n_stacks * sizeof(uint32_t));
	_cleanup_free_ uint32_t *frames = malloc(n_frames * sizeof(uint32_t));
	_cleanup_free_ const ProfileMarker **markers = malloc(((size_t)p->n_markers + 1) *
							      sizeof(ProfileMarker *));
	ThreadTables t = {
		.local_stack = local_stack, .local_frame = local_frame,
		.stacks = stacks, .frames = frames, .markers = markers,
	};
	int r;

	if (!local_stack || !local_frame || !stacks || !frames || !markers)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_markers; i++)
		markers[i] = &p->markers[i];
	if (p->n_markers > 1)
		qsort(markers, p->n_markers, sizeof(*markers), compare_markers);
	memset(local_stack, 0xff, n_stacks * sizeof(uint32_t));
	memset(local_frame, 0xff, n_frames * sizeof(uint32_t));

	fputs_unlocked("{\"meta\":{\"version\":36,\"interval\":", out);
	write_ms(out, p->period_nanos ? p->period_nanos : 1000000);
	fputs_unlocked(",\"startTime\":", out);
	write_ms(out, p->start_unix_nanos);
	if (p->n_markers > 0) {
		/* the range shown is the samples' unless given: a run's first stage spans may come before its first sample */
		uint64_t end = 0;

		for (size_t i = 0; i < p->n_samples; i++)
			end = p->samples[i].time_ns > end ? p->samples[i].time_ns : end;
		for (uint32_t i = 0; i < p->n_markers; i++)
			end = p->markers[i].end_ns > end ? p->markers[i].end_ns : end;
		fputs_unlocked(",\"profilingStartTime\":0,\"profilingEndTime\":", out);
		write_ms(out, end);
	}
	fputs_unlocked(",\"shutdownTime\":null,\"processType\":0,\"product\":", out);
	r = write_product(p, out);
	if (r < 0)
		return r;
	fputs_unlocked(",\"stackwalk\":1,\"debug\":false,\"presymbolicated\":true,\"abi\":\"\","
		       "\"misc\":\"\",\"oscpu\":\"\",\"platform\":\"Linux\",\"toolkit\":\"\","
		       "\"appBuildID\":\"\",\"sourceURL\":\"\",\"markerSchema\":[],", out);
	fputs_unlocked("\"categories\":["
		       "{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
		       "{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
		       "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}]},",
		       out);
	fputs_unlocked("\"libs\":[],\"pausedRanges\":[],\"processes\":[],"
		       "\"sources\":{\"schema\":{\"id\":0,\"filename\":1,\"startLine\":2,"
		       "\"startColumn\":3,\"sourceMapURL\":4},\"data\":[]},\"threads\":[", out);
	for (uint32_t i = 0; i < f->n_threads; i++) {
		if (i)
			putc_unlocked(',', out);
		write_thread(f, &f->threads[i], &t, out);
	}
	fputs_unlocked("]}\n", out);
	return 0;
}
