/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * speedscope's file format: one "sampled" profile per thread, whose samples
 * are the thread's folded stacks (root first) weighted by their counts times
 * the sampling period, so time reads in nanoseconds. Frames are the folding's
 * function names, shared by all threads. In a multi-process profile each
 * thread's profile is named with its process (and its stacks leave the
 * process frame out). A sampled profile has no timeline: its samples are
 * stacks in folding order, so profiles without times (bpf) lose nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "export-writers.h"
#include "text-escape.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

static void write_frames(const Folding *f, uint32_t *frame_of_name, FILE *out)
{
	const Profile *p = f->profile;
	uint32_t n_frames = 0;

	/* Frames in order of first use, so the output is deterministic. */
	fputs_unlocked("\"shared\":{\"frames\":[", out);
	for (uint32_t t = 0; t < f->n_threads; t++)
		for (size_t i = 0; i < f->threads[t].n_stacks; i++)
			for (uint32_t n = f->threads[t].stacks[i].node; n != PROFILE_NONE;
			     n = f->nodes[n].parent) {
				const FoldNode *node = &f->nodes[n];
				const ProfileFrame *frame;

				if (frame_of_name[node->function] != PROFILE_NONE)
					continue;
				/* a process frame: the profile's name says the process */
				if (node->frame == PROFILE_NONE)
					continue;
				frame = &p->frames[node->frame];
				frame_of_name[node->function] = n_frames;
				fputs_unlocked(n_frames++ ? ",{\"name\":" : "{\"name\":", out);
				write_json_string(out, p->strings[node->function]);
				if (frame->file != PROFILE_NONE) {
					fputs_unlocked(",\"file\":", out);
					write_json_string(out, p->strings[frame->file]);
				}
				putc_unlocked('}', out);
			}
	fputs_unlocked("]}", out);
}

static void write_thread(const Folding *f, const FoldThread *th, const uint32_t *frame_of_name,
			 uint32_t *path, FILE *out)
{
	const Profile *p = f->profile;
	const ProfileThread *info = profile_find_thread(p, th->tid);
	uint64_t weight = p->period_nanos ? p->period_nanos : 1, total = 0;
	_cleanup_free_ char *name = NULL;

	const ProfileProcess *proc = p->multi_process ?
				     profile_find_process(p, profile_thread_pid(p, th->tid)) : NULL;
	const char *thread = info && info->name != PROFILE_NONE ? p->strings[info->name] : "thread";

	/* in a multi-process profile each thread's name says its process */
	if ((proc && proc->label != PROFILE_NONE ?
		     asprintf(&name, "%s (tid %u) in %s", thread, th->tid, p->strings[proc->label]) :
		     asprintf(&name, "%s (tid %u)", thread, th->tid)) < 0)
		name = NULL;
	fputs_unlocked("{\"type\":\"sampled\",\"name\":", out);
	write_json_string(out, name ? name : "thread");
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":",
		p->period_nanos ? "nanoseconds" : "none");
	for (size_t i = 0; i < th->n_stacks; i++)
		total += th->stacks[i].count * weight;
	write_u64(out, total);
	fputs_unlocked(",\"samples\":[", out);
	for (size_t i = 0; i < th->n_stacks; i++) {
		uint32_t depth = fold_node_path(f, th->stacks[i].node, path);
		/* only a root can be a process frame (fold.c): tested once a stack, not per frame */
		uint32_t first = f->nodes[path[0]].frame == PROFILE_NONE ? 1 : 0;

		fputs_unlocked(i ? ",[" : "[", out);
		for (uint32_t d = first; d < depth; d++) {
			if (d > first)
				putc_unlocked(',', out);
			write_u64(out, frame_of_name[f->nodes[path[d]].function]);
		}
		putc_unlocked(']', out);
	}
	fputs_unlocked("],\"weights\":[", out);
	for (size_t i = 0; i < th->n_stacks; i++) {
		if (i)
			putc_unlocked(',', out);
		write_u64(out, th->stacks[i].count * weight);
	}
	fputs_unlocked("]}", out);
}

int export_write_speedscope(const Folding *f, FILE *out)
{
	const Profile *p = f->profile;
	_cleanup_free_ uint32_t *frame_of_name = malloc(((size_t)p->n_strings + 1) * sizeof(uint32_t));
	_cleanup_free_ uint32_t *path = malloc(((size_t)f->max_depth + 1) * sizeof(uint32_t));

	if (!frame_of_name || !path)
		return -ENOMEM;
	memset(frame_of_name, 0xff, ((size_t)p->n_strings + 1) * sizeof(uint32_t));
	fputs_unlocked("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",", out);
	write_frames(f, frame_of_name, out);
	fputs_unlocked(",\"profiles\":[", out);
	for (uint32_t t = 0; t < f->n_threads; t++) {
		if (t)
			putc_unlocked(',', out);
		write_thread(f, &f->threads[t], frame_of_name, path, out);
	}
	fputs_unlocked("],\"name\":", out);
	if (p->target != PROFILE_NONE) {
		_cleanup_free_ char *name = NULL;

		if (asprintf(&name, "profd %s", p->strings[p->target]) < 0)
			return -ENOMEM;
		write_json_string(out, name);
	} else
		fprintf(out, "\"profd pid %u\"", p->pid);
	fprintf(out, ",\"activeProfileIndex\":0,\"exporter\":\"profd %s\"}\n", PROFD_VERSION);
	return 0;
}
