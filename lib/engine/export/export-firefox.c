/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Firefox Profiler's Gecko profile format (meta.version 36, the newest
 * its importer accepts): one thread per tid with its sample timeline. The
 * samples are the folding's counted samples of that thread, their stacks the
 * profile's own stack nodes (root first, parents before children), so frames
 * keep their line. Native frames are written as "name (in module) (file:line)"
 * or "name (in module)", the location syntax the importer parses into a
 * function and a library (line breaks in names become spaces, as in folded
 * stacks, because the importer's patterns are line-bound); categories tell
 * kernel from user code.
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

static void write_thread(const Folding *f, const FoldThread *th, ThreadTables *t, FILE *out)
{
	const Profile *p = f->profile;
	const ProfileThread *info = profile_find_thread(p, th->tid), *main_thread;

	collect_tables(f, th, t);

	fputs_unlocked("{\"name\":", out);
	if (info && info->name != PROFILE_NONE)
		write_json_string(out, p->strings[info->name]);
	else
		fprintf(out, "\"tid %u\"", th->tid);
	/* the process is named after its main thread, whose tid is the pid */
	fputs_unlocked(",\"processType\":\"default\",\"processName\":", out);
	main_thread = profile_find_thread(p, p->pid);
	write_json_string(out, main_thread && main_thread->name != PROFILE_NONE ?
			       p->strings[main_thread->name] : "");
	fprintf(out, ",\"registerTime\":0,\"unregisterTime\":null,\"tid\":%u,\"pid\":%u,", th->tid,
		p->pid);
	fputs_unlocked("\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
		       "\"category\":4,\"data\":5},\"data\":[]},", out);

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

	/* string i is the location of frame i */
	fputs_unlocked("\"stringTable\":[", out);
	for (uint32_t i = 0; i < t->n_frames; i++) {
		if (i)
			putc_unlocked(',', out);
		write_location(p, &p->frames[t->frames[i]], out);
	}
	fputs_unlocked("]}", out);

	reset_tables(p, t);
}

int export_write_firefox(const Folding *f, FILE *out)
{
	const Profile *p = f->profile;
	size_t n_stacks = (size_t)p->n_stacks + 1, n_frames = (size_t)p->n_frames + 1;
	_cleanup_free_ uint32_t *local_stack = malloc(n_stacks * sizeof(uint32_t));
	_cleanup_free_ uint32_t *local_frame = malloc(n_frames * sizeof(uint32_t));
	_cleanup_free_ uint32_t *stacks = malloc(n_stacks * sizeof(uint32_t));
	_cleanup_free_ uint32_t *frames = malloc(n_frames * sizeof(uint32_t));
	ThreadTables t = {
		.local_stack = local_stack, .local_frame = local_frame,
		.stacks = stacks, .frames = frames,
	};

	if (!local_stack || !local_frame || !stacks || !frames)
		return -ENOMEM;
	memset(local_stack, 0xff, n_stacks * sizeof(uint32_t));
	memset(local_frame, 0xff, n_frames * sizeof(uint32_t));

	fputs_unlocked("{\"meta\":{\"version\":36,\"interval\":", out);
	write_ms(out, p->period_nanos ? p->period_nanos : 1000000);
	fputs_unlocked(",\"startTime\":", out);
	write_ms(out, p->start_unix_nanos);
	fprintf(out, ",\"shutdownTime\":null,\"processType\":0,\"product\":\"profd %s (pid %u)\","
		     "\"stackwalk\":1,\"debug\":false,\"presymbolicated\":true,\"abi\":\"\","
		     "\"misc\":\"\",\"oscpu\":\"\",\"platform\":\"Linux\",\"toolkit\":\"\","
		     "\"appBuildID\":\"\",\"sourceURL\":\"\",\"markerSchema\":[],",
		PROFD_VERSION, p->pid);
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
