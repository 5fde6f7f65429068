/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pprof: a gzipped perftools.profiles.Profile (protobuf-c code generated from
 * the installed profile.proto). One Sample per profile leaf stack (per thread
 * and leaf, labelled, in a multi-process profile), so file, line and inline
 * detail survive; the counts are the folding's per-thread leaf counts, so
 * pprof's function-name view equals the folding. A labelled profile (a live
 * run's) has one Sample per leaf stack and set of labels, with "stage" and
 * "state" string labels, so `-tagfocus stage=decode` shows one stage.
 *
 * An inline frame shares its address with the frame it was expanded into, so
 * a run of inlined frames and the real frame below them become one Location
 * whose Line list runs innermost first, as pprof expects.
 *
 * Mappings are true to the process, as pprof's symbolizer needs them: one per
 * mapped file, the executable first, with the runtime range of the file's
 * load and the file offset it starts at (from the profile's mappings), and
 * Location addresses are runtime addresses inside them. Kernel and JIT
 * mappings, which have no file to symbolize from, come last and span their
 * frames' addresses.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "array.h"
#include "cleanup.h"
#include "export-writers.h"
#include "id-map.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PprofProfile;
typedef Perftools__Profiles__ValueType PprofValueType;
typedef Perftools__Profiles__Sample PprofSample;
typedef Perftools__Profiles__Mapping PprofMapping;
typedef Perftools__Profiles__Location PprofLocation;
typedef Perftools__Profiles__Line PprofLine;
typedef Perftools__Profiles__Function PprofFunction;
typedef Perftools__Profiles__Label PprofLabel;

enum {
	STR_EMPTY, STR_SAMPLES, STR_COUNT, STR_CPU, STR_NANOSECONDS,
	STR_PID, STR_TID, STR_COMM, STR_UNIT, /* label keys */
	_STR_FIXED
};

typedef struct Pprof {
	const Folding *folding;
	const Profile *p;

	char **strings; /* pprof string table, borrowing the profile's strings */
	uint32_t n_strings;
	uint32_t *string_of; /* profile string -> pprof string index, 0 until used */

	IdMap *mapping_map, *function_map, *chain_map;
	PprofMapping *mappings;
	uint64_t *mapping_bias; /* runtime address - frame address, per mapping */
	int *mapping_rank;      /* sort key: executable, other files, JIT and others, kernel */
	uint32_t n_mappings;
	uint32_t mappings_allocated, mapping_bias_allocated, mapping_rank_allocated;
	PprofFunction *functions;
	uint32_t n_functions, functions_allocated;
	uint32_t *mapping_of_frame, *function_of_frame; /* pprof ids, 0 for none */

	/* an inline chain: a real frame plus the inlined frames above it, innermost last */
	uint32_t *chain_parent, *chain_frame, *chain_length, *chain_location;
	uint32_t *chain_of_stack; /* profile stack node -> chain ending with its frame */
	uint32_t *group_top;      /* profile stack node -> the real frame's node of its chain */
	uint32_t *depth_of_stack; /* locations from this node to the root */

	PprofLocation *locations;
	uint32_t *location_chain;
	uint32_t n_locations;
	PprofLine *lines;
	PprofLine **line_ptrs;

	PprofSample *samples;
	PprofSample **sample_ptrs;
	PprofLabel *labels;
	PprofLabel **label_ptrs;
	uint64_t *location_ids;
	int64_t *values;
	size_t n_samples;

	PprofMapping **mapping_ptrs;
	PprofLocation **location_ptrs;
	PprofFunction **function_ptrs;
} Pprof;

static void pprof_done(Pprof *b)
{
	free(b->strings);
	free(b->string_of);
	id_map_free(b->mapping_map);
	id_map_free(b->function_map);
	id_map_free(b->chain_map);
	free(b->mappings);
	free(b->mapping_bias);
	free(b->mapping_rank);
	free(b->functions);
	free(b->mapping_of_frame);
	free(b->function_of_frame);
	free(b->chain_parent);
	free(b->chain_frame);
	free(b->chain_length);
	free(b->chain_location);
	free(b->chain_of_stack);
	free(b->group_top);
	free(b->depth_of_stack);
	free(b->locations);
	free(b->location_chain);
	free(b->lines);
	free(b->line_ptrs);
	free(b->samples);
	free(b->sample_ptrs);
	free(b->labels);
	free(b->label_ptrs);
	free(b->location_ids);
	free(b->values);
	free(b->mapping_ptrs);
	free(b->location_ptrs);
	free(b->function_ptrs);
}

static int64_t string_index(Pprof *b, uint32_t id)
{
	if (id == PROFILE_NONE)
		return STR_EMPTY;
	if (b->string_of[id] == 0) {
		b->strings[b->n_strings] = b->p->strings[id];
		b->string_of[id] = b->n_strings++;
	}
	return b->string_of[id];
}

/* Whether the unwinder named the frame, rather than falling back to "module+0xoffset". */
static bool frame_is_symbolised(const Profile *p, const ProfileFrame *fr)
{
	const char *name = p->strings[fr->function], *module = p->strings[fr->module];
	const char *base = strrchr(module, '/');
	size_t n;

	base = base ? base + 1 : module;
	n = strlen(base);
	return !(strncmp(name, base, n) == 0 && strncmp(name + n, "+0x", 3) == 0);
}

/* The pprof mapping of a frame's (module, build-id), created with what the profile knows of it. */
static int add_frame_mapping(Pprof *b, const ProfileFrame *fr, uint32_t *ret_id)
{
	const Profile *p = b->p;
	PprofMapping *m;
	uint64_t address;
	uint32_t id;
	bool is_new;
	int r;

	r = id_map_intern(b->mapping_map, id_map_key(fr->module, fr->build_id), &id, &is_new);
	if (r < 0)
		return r;
	if (is_new) {
		const ProfileMapping *known = profile_find_mapping(p, fr->module, fr->build_id);

		r = ARRAY_RESERVE_U32(b->mappings, b->mappings_allocated, (size_t)id + 1, 16);
		if (r >= 0)
			r = ARRAY_RESERVE_U32(b->mapping_bias, b->mapping_bias_allocated,
					      (size_t)id + 1, 16);
		if (r >= 0)
			r = ARRAY_RESERVE_U32(b->mapping_rank, b->mapping_rank_allocated,
					      (size_t)id + 1, 16);
		if (r < 0)
			return r;
		m = &b->mappings[id];
		*m = (PprofMapping)PERFTOOLS__PROFILES__MAPPING__INIT;
		m->filename = string_index(b, fr->module);
		m->build_id = string_index(b, fr->build_id);
		m->memory_start = known ? known->start : UINT64_MAX;
		m->memory_limit = known ? known->limit : 0;
		m->file_offset = known ? known->offset : 0;
		b->mapping_bias[id] = known ? known->bias : 0;
		b->mapping_rank[id] = fr->kernel ? 3 : !known ? 2 : known->main ? 0 : 1;
		b->n_mappings++;
	}
	m = &b->mappings[id];
	/* a range covers every location of its mapping, which pprof's tools expect */
	address = fr->address + b->mapping_bias[id];
	if (address < m->memory_start)
		m->memory_start = address;
	if (address >= m->memory_limit)
		m->memory_limit = address + 1;
	m->has_functions |= frame_is_symbolised(p, fr);
	m->has_filenames |= fr->file != PROFILE_NONE;
	m->has_line_numbers |= fr->line != 0;
	m->has_inline_frames |= fr->inlined;
	*ret_id = id;
	return 0;
}

static int mapping_compare(const void *a, const void *b, void *userdata)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const Pprof *p = userdata;

	if (p->mapping_rank[x] != p->mapping_rank[y])
		return p->mapping_rank[x] < p->mapping_rank[y] ? -1 : 1;
	if (p->mappings[x].memory_start != p->mappings[y].memory_start)
		return p->mappings[x].memory_start < p->mappings[y].memory_start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Number the mappings in pprof's order: the executable first (pprof calls mapping 1 "main"). */
static int order_mappings(Pprof *b)
{
	_cleanup_free_ uint32_t *order = malloc(((size_t)b->n_mappings + 1) * sizeof(uint32_t));
	_cleanup_free_ uint32_t *new_id = malloc(((size_t)b->n_mappings + 1) * sizeof(uint32_t));
	_cleanup_free_ PprofMapping *sorted = malloc(((size_t)b->n_mappings + 1) * sizeof(PprofMapping));
	_cleanup_free_ uint64_t *bias = malloc(((size_t)b->n_mappings + 1) * sizeof(uint64_t));

	if (!order || !new_id || !sorted || !bias)
		return -ENOMEM;
	if (b->n_mappings == 0)
		return 0; /* an empty profile: nothing to order, and no arrays to copy */
	for (uint32_t i = 0; i < b->n_mappings; i++)
		order[i] = i;
	qsort_r(order, b->n_mappings, sizeof(uint32_t), mapping_compare, b);
	for (uint32_t i = 0; i < b->n_mappings; i++) {
		sorted[i] = b->mappings[order[i]];
		sorted[i].id = i + 1;
		bias[i] = b->mapping_bias[order[i]];
		new_id[order[i]] = i + 1;
	}
	memcpy(b->mappings, sorted, b->n_mappings * sizeof(PprofMapping));
	memcpy(b->mapping_bias, bias, b->n_mappings * sizeof(uint64_t));
	for (uint32_t i = 0; i < b->p->n_frames; i++)
		if (b->mapping_of_frame[i])
			b->mapping_of_frame[i] = new_id[b->mapping_of_frame[i] - 1];
	return 0;
}

/* Mapping and function of every profile frame. */
static int add_frames(Pprof *b)
{
	const Profile *p = b->p;
	int r;

	b->mapping_of_frame = calloc((size_t)p->n_frames + 1, sizeof(uint32_t));
	b->function_of_frame = calloc((size_t)p->n_frames + 1, sizeof(uint32_t));
	if (!b->mapping_of_frame || !b->function_of_frame)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_frames; i++) {
		const ProfileFrame *fr = &p->frames[i];
		uint32_t id;
		bool is_new;

		if (fr->module != PROFILE_NONE) {
			r = add_frame_mapping(b, fr, &id);
			if (r < 0)
				return r;
			b->mapping_of_frame[i] = id + 1;
		}

		r = id_map_intern(b->function_map, id_map_key(fr->function, fr->file), &id, &is_new);
		if (r < 0)
			return r;
		if (is_new) {
			r = ARRAY_RESERVE_U32(b->functions, b->functions_allocated, (size_t)id + 1, 16);
			if (r < 0)
				return r;
			b->functions[id] = (PprofFunction)PERFTOOLS__PROFILES__FUNCTION__INIT;
			b->functions[id].id = id + 1;
			b->functions[id].name = string_index(b, fr->function);
			b->functions[id].system_name = b->functions[id].name;
			b->functions[id].filename = string_index(b, fr->file);
			b->n_functions++;
		}
		b->function_of_frame[i] = id + 1;
	}
	return 0;
}

/* Inline chains per profile stack node; parents precede children, so one pass. */
static int add_chains(Pprof *b)
{
	const Profile *p = b->p;
	size_t n = (size_t)p->n_stacks + 1;
	uint32_t n_chains = 0;
	int r;

	b->chain_parent = malloc(n * sizeof(uint32_t));
	b->chain_frame = malloc(n * sizeof(uint32_t));
	b->chain_length = malloc(n * sizeof(uint32_t));
	b->chain_location = calloc(n, sizeof(uint32_t));
	b->chain_of_stack = malloc(n * sizeof(uint32_t));
	b->group_top = malloc(n * sizeof(uint32_t));
	b->depth_of_stack = malloc(n * sizeof(uint32_t));
	if (!b->chain_parent || !b->chain_frame || !b->chain_length || !b->chain_location ||
	    !b->chain_of_stack || !b->group_top || !b->depth_of_stack)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_stacks; i++) {
		const ProfileStackNode *s = &p->stacks[i];
		bool real = !p->frames[s->frame].inlined || s->parent == PROFILE_NONE;
		uint32_t parent_chain = real ? PROFILE_NONE : b->chain_of_stack[s->parent], id, above;
		bool is_new;

		r = id_map_intern(b->chain_map, id_map_key(parent_chain, s->frame), &id, &is_new);
		if (r < 0)
			return r;
		if (is_new) {
			b->chain_parent[id] = parent_chain;
			b->chain_frame[id] = s->frame;
			b->chain_length[id] = real ? 1 : b->chain_length[parent_chain] + 1;
			n_chains++;
		}
		b->chain_of_stack[i] = id;
		b->group_top[i] = real ? i : b->group_top[s->parent];
		above = p->stacks[b->group_top[i]].parent;
		b->depth_of_stack[i] = 1 + (above == PROFILE_NONE ? 0 : b->depth_of_stack[above]);
	}
	return 0;
}

/* One pprof Sample's worth: a leaf stack, its count, and the thread when labelled. */
typedef struct SampleSpec {
	uint32_t leaf;
	uint32_t thread; /* index into the folding's threads, PROFILE_NONE when merged */
	uint64_t count;
	size_t labelled; /* a profile sample whose labels (stage, state) it carries, or SIZE_MAX */
} SampleSpec;

/* Samples in order of leaf stack, then of their labels' values. */
static int compare_labelled(const void *a, const void *b, void *userdata)
{
	const Profile *p = userdata;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (p->samples[x].stack != p->samples[y].stack)
		return p->samples[x].stack < p->samples[y].stack ? -1 : 1;
	for (uint32_t k = 0; k < p->n_label_keys; k++) {
		uint32_t lx = profile_sample_label(p, x, k), ly = profile_sample_label(p, y, k);

		if (lx != ly)
			return lx < ly ? -1 : 1;
	}
	return (x > y) - (x < y);
}

static bool same_labels(const Profile *p, uint32_t x, uint32_t y)
{
	return memcmp(&p->sample_labels[(size_t)x * p->n_label_keys],
		      &p->sample_labels[(size_t)y * p->n_label_keys],
		      p->n_label_keys * sizeof(uint32_t)) == 0;
}

/*
 * A labelled profile (a live run's): one Sample per leaf stack and set of
 * label values, so `-tagfocus stage=decode` picks a stage's samples.
 */
static int collect_labelled_specs(Pprof *b, SampleSpec **ret, size_t *ret_n)
{
	const Folding *f = b->folding;
	const Profile *p = b->p;
	_cleanup_free_ uint32_t *order = NULL;
	_cleanup_free_ SampleSpec *specs = NULL;
	size_t n = 0, n_counted = 0;

	order = malloc((f->n_samples + 1) * sizeof(uint32_t));
	specs = malloc((f->n_samples + 1) * sizeof(SampleSpec));
	if (!order || !specs)
		return -ENOMEM;
	for (uint32_t t = 0; t < f->n_threads; t++)
		for (uint64_t i = 0; i < f->threads[t].n_samples; i++)
			order[n_counted++] = f->threads[t].samples[i];
	qsort_r(order, n_counted, sizeof(uint32_t), compare_labelled, (void *)p);
	for (size_t i = 0; i < n_counted; i++) {
		uint32_t s = order[i];

		if (n > 0 && p->samples[specs[n - 1].labelled].stack == p->samples[s].stack &&
		    same_labels(p, (uint32_t)specs[n - 1].labelled, s)) {
			specs[n - 1].count++;
			continue;
		}
		specs[n++] = (SampleSpec){ .leaf = p->samples[s].stack, .thread = PROFILE_NONE,
					   .count = 1, .labelled = s };
	}
	*ret = TAKE_PTR(specs);
	*ret_n = n;
	return 0;
}

/*
 * One Sample per leaf stack, the threads' counts added up: per-thread Samples
 * (a tid label each) made pprof files several times larger and slower for
 * many-threaded targets; the Firefox and speedscope exports keep the threads.
 * A multi-process profile is the exception: its Samples are per thread, with
 * pid, tid and comm labels (and unit), so `-tagfocus` and `-tags` tell the
 * processes apart as perf's pprof conversion does.
 */
static int collect_sample_specs(Pprof *b, SampleSpec **ret, size_t *ret_n)
{
	const Folding *f = b->folding;
	const Profile *p = b->p;
	_cleanup_free_ uint64_t *count = NULL;
	_cleanup_free_ SampleSpec *specs = NULL;
	size_t n = 0, n_leaves = 0;

	for (uint32_t t = 0; t < f->n_threads; t++)
		n_leaves += f->threads[t].n_leaves;
	if (p->n_label_keys > 0 && !p->multi_process)
		return collect_labelled_specs(b, ret, ret_n);
	specs = malloc((n_leaves + 1) * sizeof(SampleSpec));
	if (!specs)
		return -ENOMEM;
	if (p->multi_process) {
		for (uint32_t t = 0; t < f->n_threads; t++)
			for (size_t i = 0; i < f->threads[t].n_leaves; i++)
				specs[n++] = (SampleSpec){ .leaf = f->threads[t].leaves[i].node,
							   .thread = t,
							   .count = f->threads[t].leaves[i].count,
							   .labelled = SIZE_MAX };
		*ret = TAKE_PTR(specs);
		*ret_n = n;
		return 0;
	}
	count = calloc((size_t)p->n_stacks + 1, sizeof(uint64_t));
	if (!count)
		return -ENOMEM;
	for (uint32_t t = 0; t < f->n_threads; t++)
		for (size_t i = 0; i < f->threads[t].n_leaves; i++)
			count[f->threads[t].leaves[i].node] += f->threads[t].leaves[i].count;
	/* in stack node order, so the output does not depend on thread order */
	for (uint32_t leaf = 0; leaf < p->n_stacks; leaf++)
		if (count[leaf] > 0)
			specs[n++] = (SampleSpec){ .leaf = leaf, .thread = PROFILE_NONE,
						   .count = count[leaf], .labelled = SIZE_MAX };
	*ret = TAKE_PTR(specs);
	*ret_n = n;
	return 0;
}

static PprofLabel *label_num(PprofLabel *l, int64_t key, int64_t num)
{
	*l = (PprofLabel)PERFTOOLS__PROFILES__LABEL__INIT;
	l->key = key;
	l->num = num;
	return l;
}

static PprofLabel *label_str(PprofLabel *l, int64_t key, int64_t str)
{
	*l = (PprofLabel)PERFTOOLS__PROFILES__LABEL__INIT;
	l->key = key;
	l->str = str;
	return l;
}

/* pid, tid, comm (the thread's name) and unit of a per-thread Sample. */
static void add_labels(Pprof *b, PprofSample *sample, uint32_t tid, size_t *at)
{
	const Profile *p = b->p;
	const ProfileThread *info = profile_find_thread(p, tid);
	PprofLabel *l = b->labels + *at;
	size_t n = 0;

	sample->label = b->label_ptrs + *at;
	b->label_ptrs[*at + n++] = label_num(&l[0], STR_PID, profile_thread_pid(p, tid));
	b->label_ptrs[*at + n++] = label_num(&l[1], STR_TID, tid);
	if (info && info->name != PROFILE_NONE)
		b->label_ptrs[*at + n] = label_str(&l[n], STR_COMM, string_index(b, info->name)), n++;
	if (p->unit != PROFILE_NONE)
		b->label_ptrs[*at + n] = label_str(&l[n], STR_UNIT, string_index(b, p->unit)), n++;
	sample->n_label = n;
	*at += n;
}

/* The profile's own labels of a Sample (stage, state), those with a value. */
static void add_profile_labels(Pprof *b, PprofSample *sample, size_t labelled, size_t *at)
{
	const Profile *p = b->p;
	size_t n = 0;

	sample->label = b->label_ptrs + *at;
	for (uint32_t k = 0; k < p->n_label_keys; k++) {
		uint32_t value = profile_sample_label(p, labelled, k);

		if (value == PROFILE_NONE)
			continue;
		b->label_ptrs[*at + n] = label_str(&b->labels[*at + n], string_index(b, p->label_keys[k]),
						   string_index(b, value));
		n++;
	}
	sample->n_label = n;
	*at += n;
}

static int add_samples(Pprof *b)
{
	const Profile *p = b->p;
	_cleanup_free_ SampleSpec *specs = NULL;
	size_t n_ids = 0, at = 0, labels = 0;
	int r;

	r = collect_sample_specs(b, &specs, &b->n_samples);
	if (r < 0)
		return r;
	for (size_t i = 0; i < b->n_samples; i++)
		n_ids += b->depth_of_stack[specs[i].leaf];
	b->samples = calloc(b->n_samples + 1, sizeof(PprofSample));
	b->sample_ptrs = malloc((b->n_samples + 1) * sizeof(PprofSample *));
	b->values = malloc((b->n_samples + 1) * 2 * sizeof(int64_t));
	b->location_ids = malloc((n_ids + 1) * sizeof(uint64_t));
	b->location_chain = malloc(((size_t)p->n_stacks + 1) * sizeof(uint32_t));
	if (p->multi_process || p->n_label_keys > 0) {
		size_t per_sample = p->multi_process ? 4 : p->n_label_keys;

		b->labels = malloc((b->n_samples * per_sample + 1) * sizeof(PprofLabel));
		b->label_ptrs = malloc((b->n_samples * per_sample + 1) * sizeof(PprofLabel *));
		if (!b->labels || !b->label_ptrs)
			return -ENOMEM;
	}
	if (!b->samples || !b->sample_ptrs || !b->values || !b->location_ids || !b->location_chain)
		return -ENOMEM;

	for (size_t s = 0; s < b->n_samples; s++) {
		const SampleSpec *spec = &specs[s];
		PprofSample *sample = &b->samples[s];

		*sample = (PprofSample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		sample->location_id = b->location_ids + at;
		sample->n_location_id = b->depth_of_stack[spec->leaf];
		sample->value = b->values + 2 * s;
		sample->value[0] = (int64_t)spec->count;
		sample->value[1] = (int64_t)(spec->count * p->period_nanos);
		sample->n_value = 2;
		if (spec->thread != PROFILE_NONE)
			add_labels(b, sample, b->folding->threads[spec->thread].tid, &labels);
		else if (spec->labelled != SIZE_MAX)
			add_profile_labels(b, sample, spec->labelled, &labels);
		b->sample_ptrs[s] = sample;

		/* leaf first, one location per inline chain */
		for (uint32_t node = spec->leaf; node != PROFILE_NONE;
		     node = p->stacks[b->group_top[node]].parent) {
			uint32_t chain = b->chain_of_stack[node];

			if (b->chain_location[chain] == 0) {
				b->location_chain[b->n_locations] = chain;
				b->chain_location[chain] = ++b->n_locations;
			}
			b->location_ids[at++] = b->chain_location[chain];
		}
	}
	return 0;
}

static int add_locations(Pprof *b)
{
	const Profile *p = b->p;
	size_t n_lines = 0, at = 0;

	for (uint32_t l = 0; l < b->n_locations; l++)
		n_lines += b->chain_length[b->location_chain[l]];
	b->locations = calloc((size_t)b->n_locations + 1, sizeof(PprofLocation));
	b->location_ptrs = malloc(((size_t)b->n_locations + 1) * sizeof(PprofLocation *));
	b->lines = calloc(n_lines + 1, sizeof(PprofLine));
	b->line_ptrs = malloc((n_lines + 1) * sizeof(PprofLine *));
	if (!b->locations || !b->location_ptrs || !b->lines || !b->line_ptrs)
		return -ENOMEM;
	for (uint32_t l = 0; l < b->n_locations; l++) {
		PprofLocation *loc = &b->locations[l];
		uint32_t chain = b->location_chain[l], real_frame = chain;

		*loc = (PprofLocation)PERFTOOLS__PROFILES__LOCATION__INIT;
		loc->id = l + 1;
		loc->line = b->line_ptrs + at;
		loc->n_line = b->chain_length[chain];
		/* innermost (the chain's last inlined frame) first, the real frame last */
		for (uint32_t c = chain; c != PROFILE_NONE; c = b->chain_parent[c]) {
			const ProfileFrame *fr = &p->frames[b->chain_frame[c]];
			PprofLine *line = &b->lines[at];

			*line = (PprofLine)PERFTOOLS__PROFILES__LINE__INIT;
			line->function_id = b->function_of_frame[b->chain_frame[c]];
			line->line = fr->line;
			b->line_ptrs[at++] = line;
			real_frame = c;
		}
		real_frame = b->chain_frame[real_frame];
		loc->mapping_id = b->mapping_of_frame[real_frame];
		loc->address = p->frames[real_frame].address +
			       (loc->mapping_id ? b->mapping_bias[loc->mapping_id - 1] : 0);
		b->location_ptrs[l] = loc;
	}
	return 0;
}

static int write_gzip(const uint8_t *data, size_t size, FILE *out)
{
	uint8_t buf[64 * 1024];
	size_t produced;
	z_stream z = {};
	int r, zr;

	/* windowBits 31: gzip framing; level 1 because profiles compress well anyway */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)data;
	z.avail_in = 0;
	r = 0;
	do {
		/* avail_in is 32-bit: feed large buffers in slices */
		if (z.avail_in == 0 && size > 0) {
			size_t n = size > (1u << 30) ? (1u << 30) : size;

			z.avail_in = n;
			size -= n;
		}
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, size == 0 ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR) {
			r = -EIO;
			break;
		}
		produced = sizeof(buf) - z.avail_out;
		if (fwrite_unlocked(buf, 1, produced, out) != produced) {
			r = -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return r;
}

static int build(Pprof *b, PprofProfile *prof, PprofValueType *types)
{
	const Profile *p = b->p;
	int r;

	b->strings = malloc(((size_t)p->n_strings + _STR_FIXED) * sizeof(char *));
	b->string_of = calloc((size_t)p->n_strings + 1, sizeof(uint32_t));
	if (!b->strings || !b->string_of)
		return -ENOMEM;
	b->strings[STR_EMPTY] = (char *)"";
	b->strings[STR_SAMPLES] = (char *)"samples";
	b->strings[STR_COUNT] = (char *)"count";
	b->strings[STR_CPU] = (char *)"cpu";
	b->strings[STR_NANOSECONDS] = (char *)"nanoseconds";
	b->strings[STR_PID] = (char *)"pid";
	b->strings[STR_TID] = (char *)"tid";
	b->strings[STR_COMM] = (char *)"comm";
	b->strings[STR_UNIT] = (char *)"unit";
	b->n_strings = _STR_FIXED;

	r = id_map_new(64, &b->mapping_map);
	if (r < 0)
		return r;
	r = id_map_new(p->n_frames, &b->function_map);
	if (r < 0)
		return r;
	r = id_map_new(p->n_stacks, &b->chain_map);
	if (r < 0)
		return r;
	r = add_frames(b);
	if (r < 0)
		return r;
	r = order_mappings(b);
	if (r < 0)
		return r;
	r = add_chains(b);
	if (r < 0)
		return r;
	r = add_samples(b);
	if (r < 0)
		return r;
	r = add_locations(b);
	if (r < 0)
		return r;

	b->mapping_ptrs = malloc(((size_t)b->n_mappings + 1) * sizeof(PprofMapping *));
	b->function_ptrs = malloc(((size_t)b->n_functions + 1) * sizeof(PprofFunction *));
	if (!b->mapping_ptrs || !b->function_ptrs)
		return -ENOMEM;
	for (uint32_t i = 0; i < b->n_mappings; i++)
		b->mapping_ptrs[i] = &b->mappings[i];
	for (uint32_t i = 0; i < b->n_functions; i++)
		b->function_ptrs[i] = &b->functions[i];

	types[0].type = STR_SAMPLES;
	types[0].unit = STR_COUNT;
	types[1].type = STR_CPU;
	types[1].unit = STR_NANOSECONDS;
	types[2] = types[1];
	prof->n_sample_type = 2;
	prof->n_sample = b->n_samples;
	prof->sample = b->sample_ptrs;
	prof->n_mapping = b->n_mappings;
	prof->mapping = b->mapping_ptrs;
	prof->n_location = b->n_locations;
	prof->location = b->location_ptrs;
	prof->n_function = b->n_functions;
	prof->function = b->function_ptrs;
	prof->n_string_table = b->n_strings;
	prof->string_table = b->strings;
	prof->time_nanos = (int64_t)p->start_unix_nanos;
	prof->duration_nanos = (int64_t)p->duration_nanos;
	prof->period_type = &types[2];
	prof->period = (int64_t)p->period_nanos;
	prof->default_sample_type = STR_CPU;
	return 0;
}

int export_write_pprof(const Folding *f, FILE *out)
{
	_cleanup_(pprof_done) Pprof b = { .folding = f, .p = f->profile };
	PprofValueType types[3] = {
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
	};
	PprofValueType *type_ptrs[2] = { &types[0], &types[1] };
	PprofProfile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	_cleanup_free_ uint8_t *packed = NULL;
	size_t size;
	int r;

	r = build(&b, &prof, types);
	if (r < 0)
		return r;
	prof.sample_type = type_ptrs;
	size = perftools__profiles__profile__get_packed_size(&prof);
	packed = malloc(size + 1);
	if (!packed)
		return -ENOMEM;
	perftools__profiles__profile__pack(&prof, packed);
	return write_gzip(packed, size, out);
}
