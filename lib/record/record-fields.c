/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tables of keyhog-profile-v1's fields (docs/record-format.md), in wire
 * order, and the two walks that need no JSON: freeing and equality.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "record-fields.h"
#include "record.h"

extern const EnumNames stage_enum_names, run_state_enum_names, cache_state_enum_names,
	daemon_state_enum_names;

#define TABLE(T, ...)                                                                      \
	{                                                                                   \
		.size = sizeof(T), .extra_offset = offsetof(T, extra),                      \
		.fields = (const Field[]){ __VA_ARGS__ },                                   \
		.n_fields = sizeof((const Field[]){ __VA_ARGS__ }) / sizeof(Field),         \
	}
#define KEY(name) .key = "\"" name "\": ", .key_len = sizeof("\"" name "\": ") - 1
#define F(T, member, field_type, req) \
	{ .name = #member, KEY(#member), .type = (field_type), .offset = offsetof(T, member), .required = (req) }
#define F_ENUM(T, member, enum_names) \
	{ .name = #member, KEY(#member), .type = FIELD_ENUM, .offset = offsetof(T, member), .required = true, \
	  .names = &(enum_names) }
#define F_OBJECT(T, member, struct_fields) \
	{ .name = #member, KEY(#member), .type = FIELD_OBJECT, .offset = offsetof(T, member), .required = true, \
	  .fields = &(struct_fields) }
#define F_ARRAY(T, member, count, struct_fields, req)                                         \
	{ .name = #member, KEY(#member), .type = FIELD_ARRAY, .offset = offsetof(T, member), .required = (req), \
	  .fields = &(struct_fields), .count_offset = offsetof(T, count) }

const StructFields run_identity_fields = TABLE(RunIdentity,
	F(RunIdentity, run_id, FIELD_STRING, true),
	F(RunIdentity, binary_version, FIELD_STRING, true),
	F(RunIdentity, detector_digest, FIELD_STRING, true),
	F(RunIdentity, config_digest, FIELD_STRING, true),
	F(RunIdentity, source_kind, FIELD_STRING, true),
	F(RunIdentity, workload_class, FIELD_STRING, true),
	F(RunIdentity, backend_requested, FIELD_STRING, true),
	F(RunIdentity, backend_selected, FIELD_OPT_STRING, false),
	F_ENUM(RunIdentity, cache_state, cache_state_enum_names),
	F_ENUM(RunIdentity, daemon_state, daemon_state_enum_names),
	F(RunIdentity, scanner_threads, FIELD_U64, true),
	F(RunIdentity, reader_threads, FIELD_OPT_U64, false),
	F(RunIdentity, logical_cpus, FIELD_U64, true));

static const StructFields stage_fields = TABLE(StageMeasurement,
	F_ENUM(StageMeasurement, stage, stage_enum_names),
	F(StageMeasurement, elapsed_ns, FIELD_U64, true),
	F(StageMeasurement, calls, FIELD_U64, true),
	F(StageMeasurement, attributed_ns, FIELD_U64, true));

static const StructFields transition_fields = TABLE(StateTransition,
	F_ENUM(StateTransition, state, run_state_enum_names),
	F(StateTransition, elapsed_ns, FIELD_U64, true));

static const StructFields state_fields = TABLE(StateMeasurement,
	F_ENUM(StateMeasurement, state, run_state_enum_names),
	F(StateMeasurement, elapsed_ns, FIELD_U64, true),
	F(StateMeasurement, cpu_time_ms, FIELD_OPT_U64, false),
	F(StateMeasurement, aggregate_cpu_milli_percent, FIELD_OPT_U64, false),
	F(StateMeasurement, resident_start_bytes, FIELD_OPT_U64, false),
	F(StateMeasurement, resident_end_bytes, FIELD_OPT_U64, false),
	F(StateMeasurement, threads_start, FIELD_OPT_U64, false),
	F(StateMeasurement, threads_end, FIELD_OPT_U64, false));

static const StructFields snapshot_fields = TABLE(ResourceSnapshot,
	F(ResourceSnapshot, cpu_time_ms, FIELD_OPT_U64, false),
	F(ResourceSnapshot, resident_bytes, FIELD_OPT_U64, false),
	F(ResourceSnapshot, virtual_bytes, FIELD_OPT_U64, false),
	F(ResourceSnapshot, thread_count, FIELD_OPT_U64, false));

static const StructFields sample_fields = TABLE(ResourceSample,
	F_ENUM(ResourceSample, state, run_state_enum_names),
	F(ResourceSample, elapsed_ns, FIELD_U64, true),
	F_OBJECT(ResourceSample, snapshot, snapshot_fields));

static const StructFields usage_fields = TABLE(ResourceUsage,
	F_OBJECT(ResourceUsage, start, snapshot_fields),
	F_OBJECT(ResourceUsage, finish, snapshot_fields),
	F(ResourceUsage, max_observed_resident_bytes, FIELD_OPT_U64, false),
	F(ResourceUsage, max_observed_threads, FIELD_OPT_U64, false),
	F(ResourceUsage, aggregate_cpu_percent, FIELD_OPT_F64, false));

/* schema is always RECORD_SCHEMA: checked and written, never stored */
const StructFields run_profile_fields = TABLE(RunProfile,
	{ .name = "schema", KEY("schema"), .type = FIELD_SCHEMA, .required = true },
	F_OBJECT(RunProfile, identity, run_identity_fields),
	F_ENUM(RunProfile, status, run_state_enum_names),
	F(RunProfile, wall_time_ns, FIELD_U64, true),
	F(RunProfile, input_bytes, FIELD_U64, true),
	F(RunProfile, input_units, FIELD_U64, true),
	F_ARRAY(RunProfile, stages, n_stages, stage_fields, true),
	F_ARRAY(RunProfile, transitions, n_transitions, transition_fields, true),
	/* absent is empty (but null is still a type error) */
	F_ARRAY(RunProfile, states, n_states, state_fields, false),
	F_ARRAY(RunProfile, resource_samples, n_resource_samples, sample_fields, true),
	F_OBJECT(RunProfile, resources, usage_fields));

void struct_fields_done(const StructFields *sf, void *base)
{
	for (size_t i = 0; i < sf->n_fields; i++) {
		const Field *f = &sf->fields[i];

		switch (f->type) {
		case FIELD_STRING:
		case FIELD_OPT_STRING:
			free(*FIELD_AT(base, f, char *));
			break;
		case FIELD_OBJECT:
			struct_fields_done(f->fields, FIELD_AT(base, f, char));
			break;
		case FIELD_ARRAY: {
			char *items = *FIELD_AT(base, f, char *);
			size_t n = *(size_t *)((char *)base + f->count_offset);

			for (size_t j = 0; j < n; j++)
				struct_fields_done(f->fields, items + j * f->fields->size);
			free(items);
			break;
		}
		default:
			break;
		}
	}
	json_decref(*(json_t **)((char *)base + sf->extra_offset));
	memset(base, 0, sf->size);
}

static bool str_equal(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	return strcmp(a, b) == 0;
}

static bool field_equal(const Field *f, const void *a, const void *b)
{
	switch (f->type) {
	case FIELD_SCHEMA:
		return true;
	case FIELD_STRING:
	case FIELD_OPT_STRING:
		return str_equal(*FIELD_AT(a, f, char *), *FIELD_AT(b, f, char *));
	case FIELD_U64:
		return *FIELD_AT(a, f, uint64_t) == *FIELD_AT(b, f, uint64_t);
	case FIELD_OPT_U64: {
		const OptU64 *x = FIELD_AT(a, f, OptU64), *y = FIELD_AT(b, f, OptU64);

		return x->set == y->set && (!x->set || x->value == y->value);
	}
	case FIELD_OPT_F64: {
		const OptF64 *x = FIELD_AT(a, f, OptF64), *y = FIELD_AT(b, f, OptF64);

		return x->set == y->set && (!x->set || x->value == y->value);
	}
	case FIELD_ENUM:
		return *FIELD_AT(a, f, int) == *FIELD_AT(b, f, int);
	case FIELD_OBJECT:
		return struct_fields_equal(f->fields, FIELD_AT(a, f, char), FIELD_AT(b, f, char));
	case FIELD_ARRAY: {
		const char *x = *FIELD_AT(a, f, char *), *y = *FIELD_AT(b, f, char *);
		size_t n = *(const size_t *)((const char *)a + f->count_offset);

		if (n != *(const size_t *)((const char *)b + f->count_offset))
			return false;
		for (size_t j = 0; j < n; j++)
			if (!struct_fields_equal(f->fields, x + j * f->fields->size,
						 y + j * f->fields->size))
				return false;
		return true;
	}
	}
	return false;
}

bool struct_fields_equal(const StructFields *sf, const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)((const char *)a + sf->extra_offset);
	const json_t *y = *(json_t *const *)((const char *)b + sf->extra_offset);

	for (size_t i = 0; i < sf->n_fields; i++)
		if (!field_equal(&sf->fields[i], a, b))
			return false;
	if (!x || !y)
		return !x && !y;
	return json_equal(x, y);
}
