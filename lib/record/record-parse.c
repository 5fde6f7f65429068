/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict keyhog-profile-v1 parser (docs/record-format.md, "Parsing"), driven
 * by the field tables of record-fields.c: wrong types, unknown enum values,
 * negative or fractional integers, missing required fields, non-objects and
 * any other schema are refused, each refusal naming the JSON path of the
 * offending field. Unknown fields are kept in `extra`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "assert-return.h"
#include "cleanup.h"
#include "json-number.h"
#include "record-fields.h"
#include "record.h"

typedef struct Parser {
	char path[256];
	size_t path_len;
	char *error;
} Parser;

_printf_(2, 3) static int fail(Parser *p, const char *fmt, ...)
{
	_cleanup_free_ char *reason = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&reason, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	free(p->error);
	if (asprintf(&p->error, "%s: %s", p->path_len > 0 ? p->path : "document", reason) < 0) {
		p->error = NULL;
		return -ENOMEM;
	}
	return -EINVAL;
}

/* Append text to the path (truncating, never overflowing); returns the length to restore. */
static size_t path_append(Parser *p, const char *text, size_t n)
{
	size_t saved = p->path_len;

	if (n > sizeof(p->path) - 1 - saved)
		n = sizeof(p->path) - 1 - saved;
	memcpy(p->path + saved, text, n);
	p->path_len = saved + n;
	p->path[p->path_len] = '\0';
	return saved;
}

/* Append ".name" (or "name" at the root); called for every field, so no printf. */
static size_t path_push_field(Parser *p, const char *name)
{
	size_t saved = p->path_len;

	if (saved > 0)
		path_append(p, ".", 1);
	path_append(p, name, strlen(name));
	return saved;
}

static size_t path_push_index(Parser *p, size_t index)
{
	char buf[24];
	size_t i = sizeof(buf);

	buf[--i] = ']';
	do {
		buf[--i] = (char) ('0' + index % 10);
		index /= 10;
	} while (index > 0);
	buf[--i] = '[';
	return path_append(p, buf + i, sizeof(buf) - i);
}

static void path_pop(Parser *p, size_t saved)
{
	p->path_len = saved;
	p->path[saved] = '\0';
}

/* What a value is, for "invalid type: X, expected Y" (serde's wording). */
static void describe(const json_t *v, char *buf, size_t size)
{
	const char *big = json_big_integer_text(v);
	char f[JSON_FLOAT_MAX];

	if (big)
		snprintf(buf, size, "integer %s", big);
	else if (json_is_string(v))
		snprintf(buf, size, "string \"%.40s%s\"", json_string_value(v),
			 json_string_length(v) > 40 ? "..." : "");
	else if (json_is_integer(v))
		snprintf(buf, size, "integer %" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v)) {
		json_format_f64(json_real_value(v), f);
		snprintf(buf, size, "floating point %s", f);
	} else if (json_is_boolean(v))
		snprintf(buf, size, "boolean %s", json_is_true(v) ? "true" : "false");
	else if (json_is_null(v))
		snprintf(buf, size, "null");
	else if (json_is_array(v))
		snprintf(buf, size, "array");
	else
		snprintf(buf, size, "object");
}

static int fail_type(Parser *p, const json_t *v, const char *expected)
{
	char what[80];

	describe(v, what, sizeof(what));
	return fail(p, "invalid type: %s, expected %s", what, expected);
}

static int parse_u64(Parser *p, const json_t *v, uint64_t *ret)
{
	const char *big = json_big_integer_text(v);

	if (big) {
		char *end;
		unsigned long long u;

		if (big[0] == '-')
			return fail(p, "invalid value: integer %s, expected an unsigned integer", big);
		errno = 0;
		u = strtoull(big, &end, 10);
		if (errno == ERANGE || *end != '\0')
			return fail(p, "invalid value: integer %s is out of range for u64 (max %" PRIu64
				    ")", big, UINT64_MAX);
		*ret = u;
		return 0;
	}
	if (!json_is_integer(v))
		return fail_type(p, v, "an unsigned integer");
	if (json_integer_value(v) < 0)
		return fail(p, "invalid value: integer %" JSON_INTEGER_FORMAT
			    ", expected an unsigned integer", json_integer_value(v));
	*ret = (uint64_t) json_integer_value(v);
	return 0;
}

static int parse_opt_u64(Parser *p, const json_t *v, OptU64 *ret)
{
	uint64_t u;
	int r;

	if (!v || json_is_null(v)) {
		*ret = (OptU64) {};
		return 0;
	}
	r = parse_u64(p, v, &u);
	if (r < 0)
		return r;
	*ret = OPT_U64(u);
	return 0;
}

static int parse_opt_f64(Parser *p, const json_t *v, OptF64 *ret)
{
	const char *big;

	if (!v || json_is_null(v))
		*ret = (OptF64) {};
	else if ((big = json_big_integer_text(v)))
		*ret = OPT_F64(strtod(big, NULL));
	else if (json_is_number(v))
		*ret = OPT_F64(json_number_value(v));
	else
		return fail_type(p, v, "a floating point number");
	return 0;
}

static int parse_string(Parser *p, const json_t *v, bool nullable, char **ret)
{
	char *s = NULL;

	if (nullable && (!v || json_is_null(v))) {
		*ret = NULL;
		return 0;
	}
	if (!json_is_string(v) || json_big_integer_text(v))
		return fail_type(p, v, "a string");
	s = strndup(json_string_value(v), json_string_length(v));
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* An enum variant by its wire name. */
static int parse_enum(Parser *p, const json_t *v, const EnumNames *e, int *ret)
{
	char expected[256] = "";
	size_t n = 0;

	if (!json_is_string(v) || json_big_integer_text(v))
		return fail_type(p, v, "a string (enum variant)");
	for (int i = 0; i < e->n; i++)
		if (strcmp(e->names[i], json_string_value(v)) == 0) {
			*ret = i;
			return 0;
		}
	/* stages are too many to list usefully */
	for (int i = 0; e->n <= 8 && i < e->n; i++) {
		int w = snprintf(expected + n, sizeof(expected) - n, "%s%s",
				 i > 0 ? ", " : ", expected one of ", e->names[i]);
		n += w > 0 ? (size_t)w : 0;
	}
	return fail(p, "unknown variant \"%.40s\"%s", json_string_value(v), expected);
}

static int parse_schema(Parser *p, const json_t *v)
{
	if (!json_is_string(v) || json_big_integer_text(v))
		return fail_type(p, v, "a string");
	if (strcmp(json_string_value(v), RECORD_SCHEMA) != 0)
		return fail(p, "unsupported schema \"%.40s\", expected \"" RECORD_SCHEMA "\"",
			    json_string_value(v));
	return 0;
}

static int fail_missing(Parser *p, const char *name)
{
	size_t saved = path_push_field(p, name);
	int r = fail(p, "missing field");

	path_pop(p, saved);
	return r;
}

/* The fields of obj that the table does not know, into *ret_extra (NULL when none), to keep them. */
static int gather_extra(const json_t *obj, const StructFields *sf, json_t **ret_extra)
{
	_cleanup_(json_decrefp) json_t *extra = NULL;
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)obj, key, value) {
		bool known = false;

		for (size_t i = 0; i < sf->n_fields && !known; i++)
			known = strcmp(sf->fields[i].name, key) == 0;
		if (known)
			continue;
		if (!extra) {
			extra = json_object();
			if (!extra)
				return -ENOMEM;
		}
		if (json_object_set(extra, key, value) < 0)
			return -ENOMEM;
	}
	*ret_extra = TAKE_PTR(extra);
	return 0;
}

static int parse_struct(Parser *p, const json_t *obj, const StructFields *sf, void *base);

/*
 * An array of structs; the count grows with each element parsed, so freeing
 * the record frees a partial array after a refusal. Absent (optional only): empty.
 */
static int parse_array(Parser *p, const json_t *v, const Field *f, void *base)
{
	size_t size = f->fields->size, *count = (size_t *)((char *)base + f->count_offset);
	char *items;
	int r = 0;

	if (!v)
		return 0;
	if (!json_is_array(v))
		return fail_type(p, v, "an array");
	if (json_array_size(v) == 0)
		return 0;
	items = calloc(json_array_size(v), size);
	if (!items)
		return -ENOMEM;
	*FIELD_AT(base, f, char *) = items;
	for (size_t i = 0; r >= 0 && i < json_array_size(v); i++) {
		size_t saved = path_push_index(p, i);

		*count = i + 1;
		r = parse_struct(p, json_array_get(v, i), f->fields, items + i * size);
		path_pop(p, saved);
	}
	return r;
}

/* One field's value v (NULL when absent; a required field is never absent here). */
static int parse_field(Parser *p, const Field *f, const json_t *v, void *base)
{
	switch (f->type) {
	case FIELD_SCHEMA:
		return parse_schema(p, v);
	case FIELD_STRING:
	case FIELD_OPT_STRING:
		return parse_string(p, v, f->type == FIELD_OPT_STRING, FIELD_AT(base, f, char *));
	case FIELD_U64:
		return v ? parse_u64(p, v, FIELD_AT(base, f, uint64_t)) : 0;
	case FIELD_OPT_U64:
		return parse_opt_u64(p, v, FIELD_AT(base, f, OptU64));
	case FIELD_OPT_F64:
		return parse_opt_f64(p, v, FIELD_AT(base, f, OptF64));
	case FIELD_ENUM:
		return v ? parse_enum(p, v, f->names, FIELD_AT(base, f, int)) : 0;
	case FIELD_OBJECT:
		return v ? parse_struct(p, v, f->fields, FIELD_AT(base, f, char)) : 0;
	case FIELD_ARRAY:
		return parse_array(p, v, f, base);
	}
	return -EINVAL;
}

/* A JSON object into the struct at base by its field table, the field's name on the path. */
static int parse_struct(Parser *p, const json_t *obj, const StructFields *sf, void *base)
{
	if (!json_is_object(obj))
		return fail_type(p, obj, "an object");
	for (size_t i = 0; i < sf->n_fields; i++) {
		const Field *f = &sf->fields[i];
		const json_t *v = json_object_get(obj, f->name);
		size_t saved;
		int r;

		if (f->required && !v)
			return fail_missing(p, f->name);
		saved = path_push_field(p, f->name);
		r = parse_field(p, f, v, base);
		path_pop(p, saved);
		if (r < 0)
			return r;
	}
	return gather_extra(obj, sf, (json_t **)((char *)base + sf->extra_offset));
}

int record_parse(const char *json, size_t len, RunProfile **ret, char **ret_error)
{
	_cleanup_(run_profile_freep) RunProfile *rp = NULL;
	_cleanup_(json_decrefp) json_t *root = NULL;
	_cleanup_free_ char *marked = NULL;
	Parser p = {};
	json_error_t error;
	size_t marked_len = 0;
	int r;

	assert_return(json && ret, -EINVAL);
	r = json_mark_big_integers(json, len, &marked, &marked_len);
	if (r == -EBADMSG)
		r = fail(&p, "invalid JSON: \\u0000 is not allowed in strings");
	if (r < 0)
		goto finish;

	root = json_loadb(marked ?: json, marked ? marked_len : len,
			  JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | (marked ? JSON_ALLOW_NUL : 0),
			  &error);
	if (!root) {
		r = fail(&p, "invalid JSON at line %d column %d: %s", error.line, error.column,
			 error.text);
		goto finish;
	}

	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		r = -ENOMEM;
		goto finish;
	}
	r = parse_struct(&p, root, &run_profile_fields, rp);
	if (r >= 0)
		*ret = TAKE_PTR(rp);
finish:
	if (r == -EINVAL && ret_error)
		*ret_error = TAKE_PTR(p.error);
	free(p.error);
	return r < 0 ? r : 0;
}
