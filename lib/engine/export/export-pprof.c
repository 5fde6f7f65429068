/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pprof: a gzipped perftools.profiles.Profile (protobuf-c code generated from
 * the installed profile.proto). One Sample per (thread, profile leaf stack),
 * so file, line and inline detail survive; the counts are the folding's
 * per-thread leaf counts, so pprof's function-name view equals the folding.
 *
 * An inline frame shares its address with the frame it was expanded into, so
 * a run of inlined frames and the real frame below them become one Location
 * whose Line list runs innermost first, as pprof expects.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

enum { STR_EMPTY, STR_SAMPLES, STR_COUNT, STR_CPU, STR_NANOSECONDS, _STR_FIXED };

typedef struct Pprof {
	const Folding *folding;
	const Profile *p;

	char **strings; /* pprof string table, borrowing the profile's strings */
	uint32_t n_strings;
	uint32_t *string_of; /* profile string -> pprof string index, 0 until used */

	IdMap *mapping_map, *function_map, *chain_map;
	PprofMapping *mappings;
	uint32_t n_mappings;
	PprofFunction *functions;
	uint32_t n_functions;
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

static int grow_array(void **array, uint32_t n, size_t size)
{
	void *a;

	/* room for 16, then double whenever a power of two from 16 on fills up */
	if (n != 0 && (n < 16 || (n & (n - 1))))
		return 0;
	a = reallocarray(*array, n ? (size_t)n * 2 : 16, size);
	if (!a)
		return -ENOMEM;
	*array = a;
	return 0;
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
			PprofMapping *m;

			r = id_map_intern(b->mapping_map, id_map_key(fr->module, fr->build_id), &id,
					  &is_new);
			if (r < 0)
				return r;
			if (is_new) {
				r = grow_array((void **)&b->mappings, b->n_mappings,
					       sizeof(PprofMapping));
				if (r < 0)
					return r;
				b->mappings[id] = (PprofMapping)PERFTOOLS__PROFILES__MAPPING__INIT;
				b->mappings[id].id = id + 1;
				b->mappings[id].filename = string_index(b, fr->module);
				b->mappings[id].build_id = string_index(b, fr->build_id);
				b->n_mappings++;
			}
			m = &b->mappings[id];
			if (fr->address >= m->memory_limit)
				m->memory_limit = fr->address + 1;
			m->has_functions |= frame_is_symbolised(p, fr);
			m->has_filenames |= fr->file != PROFILE_NONE;
			m->has_line_numbers |= fr->line != 0;
			m->has_inline_frames |= fr->inlined;
			b->mapping_of_frame[i] = id + 1;
		}

		r = id_map_intern(b->function_map, id_map_key(fr->function, fr->file), &id, &is_new);
		if (r < 0)
			return r;
		if (is_new) {
			r = grow_array((void **)&b->functions, b->n_functions, sizeof(PprofFunction));
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

/*
 * One Sample per leaf stack, the threads' counts added up: per-thread Samples
 * (a tid label each) made pprof files several times larger and slower for
 * many-threaded targets; the Firefox and speedscope exports keep the threads.
 */
static int add_samples(Pprof *b)
{
	const Folding *f = b->folding;
	const Profile *p = b->p;
	_cleanup_free_ uint64_t *count = calloc((size_t)p->n_stacks + 1, sizeof(uint64_t));
	size_t n_ids = 0, at = 0, s = 0;

	if (!count)
		return -ENOMEM;
	for (uint32_t t = 0; t < f->n_threads; t++)
		for (size_t i = 0; i < f->threads[t].n_leaves; i++) {
			const FoldCount *leaf = &f->threads[t].leaves[i];

			if (count[leaf->node] == 0) {
				b->n_samples++;
				n_ids += b->depth_of_stack[leaf->node];
			}
			count[leaf->node] += leaf->count;
		}
	b->samples = calloc(b->n_samples + 1, sizeof(PprofSample));
	b->sample_ptrs = malloc((b->n_samples + 1) * sizeof(PprofSample *));
	b->values = malloc((b->n_samples + 1) * 2 * sizeof(int64_t));
	b->location_ids = malloc((n_ids + 1) * sizeof(uint64_t));
	b->location_chain = malloc(((size_t)p->n_stacks + 1) * sizeof(uint32_t));
	if (!b->samples || !b->sample_ptrs || !b->values || !b->location_ids || !b->location_chain)
		return -ENOMEM;

	/* in stack node order, so the output does not depend on thread order */
	for (uint32_t leaf = 0; leaf < p->n_stacks; leaf++) {
		PprofSample *sample;

		if (count[leaf] == 0)
			continue;
		sample = &b->samples[s];
		*sample = (PprofSample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		sample->location_id = b->location_ids + at;
		sample->n_location_id = b->depth_of_stack[leaf];
		sample->value = b->values + 2 * s;
		sample->value[0] = (int64_t)count[leaf];
		sample->value[1] = (int64_t)(count[leaf] * p->period_nanos);
		sample->n_value = 2;
		b->sample_ptrs[s++] = sample;

		/* leaf first, one location per inline chain */
		for (uint32_t node = leaf; node != PROFILE_NONE;
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
		loc->address = p->frames[real_frame].address;
		loc->mapping_id = b->mapping_of_frame[real_frame];
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
