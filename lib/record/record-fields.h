/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The run record's fields, described once (record-fields.c): every JSON object
 * of keyhog-profile-v1 is a struct with a table of its fields in wire order.
 * Parsing (record-parse.c), writing (record-json.c), equality and freeing
 * (record.c) walk these tables, so a field is added in one place.
 */

#include <stdbool.h>
#include <stddef.h>

typedef enum FieldType {
	FIELD_SCHEMA,     /* the constant RECORD_SCHEMA; not stored */
	FIELD_STRING,     /* char * */
	FIELD_OPT_STRING, /* char *, NULL for null */
	FIELD_U64,        /* uint64_t */
	FIELD_OPT_U64,    /* OptU64 */
	FIELD_OPT_F64,    /* OptF64 */
	FIELD_ENUM,       /* an enum (int-sized) by its kebab-case wire name */
	FIELD_OBJECT,     /* a struct of its own, embedded */
	FIELD_ARRAY,      /* a malloc'd array of structs and its size_t count */
} FieldType;

typedef struct EnumNames {
	const char *const *names; /* indexed by value */
	int n;
} EnumNames;

typedef struct StructFields StructFields;

typedef struct Field {
	const char *name;
	/* the writer's hot loop: "\"name\": " (compact drops the final space) and its length */
	const char *key;
	size_t key_len;
	FieldType type;
	size_t offset;
	/* absent is an error; otherwise absent reads as null (or, for an array, as empty) */
	bool required;
	const EnumNames *names;       /* FIELD_ENUM */
	const StructFields *fields;   /* FIELD_OBJECT, FIELD_ARRAY (its elements) */
	size_t count_offset;          /* FIELD_ARRAY */
} Field;

struct StructFields {
	size_t size;
	size_t extra_offset; /* the struct's json_t *extra: unknown fields, kept */
	const Field *fields;
	size_t n_fields;
};

extern const StructFields run_profile_fields;
extern const StructFields run_identity_fields;

/* The value of a field of the struct at base. */
#define FIELD_AT(base, field, type) ((type *)((char *)(base) + (field)->offset))

/* Free what the struct at base owns (not base itself) and zero it. */
void struct_fields_done(const StructFields *sf, void *base);
/* Field-by-field equality, unknown fields included. */
bool struct_fields_equal(const StructFields *sf, const void *a, const void *b);
