/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyhog-profile-v1 serialisation (docs/record-format.md, "Writing"), driven by
 * the field tables of record-fields.c: fields in wire order, compact or pretty
 * (two-space indent, "key": value, [] and {} when empty), control characters
 * escaped, shortest round-trip floats; byte-identical to the reference
 * records in tests/fixtures/. Unknown fields of a parsed record follow the
 * known ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "assert-return.h"
#include "array.h"
#include "cleanup.h"
#include "json-number.h"
#include "record-fields.h"
#include "record.h"

typedef struct Writer {
	char *buf;
	size_t len, size;
	unsigned depth;
	bool pretty;
	bool oom;
} Writer;

static void w_raw(Writer *w, const char *s, size_t n)
{
	if (w->oom)
		return;
	/* a typical record is a few KiB */
	if (ARRAY_RESERVE(w->buf, w->size, w->len + n + 1, 8192) < 0) {
		w->oom = true;
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void w_str(Writer *w, const char *s)
{
	w_raw(w, s, strlen(s));
}

static void w_newline(Writer *w)
{
	static const char indent[] = "\n                                                                ";
	size_t n = 2 * (size_t) w->depth;

	/* deeper than the record's own nesting only in unknown fields: rare */
	w_raw(w, indent, 1);
	while (n > 0) {
		size_t chunk = n < sizeof(indent) - 2 ? n : sizeof(indent) - 2;

		w_raw(w, indent + 1, chunk);
		n -= chunk;
	}
}

static void w_string(Writer *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	w_raw(w, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char) s[i];
		const char *esc = NULL;
		char u[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		w_raw(w, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			memcpy(u, "\\u00", 4);
			u[4] = hex[c >> 4];
			u[5] = hex[c & 0xf];
			u[6] = '\0';
			esc = u;
		}
		w_str(w, esc);
	}
	w_raw(w, s + run, n - run);
	w_raw(w, "\"", 1);
}

static void w_open(Writer *w, const char *bracket)
{
	w_str(w, bracket);
	w->depth++;
}

static void w_close(Writer *w, const char *bracket, bool empty)
{
	w->depth--;
	if (!empty && w->pretty)
		w_newline(w);
	w_str(w, bracket);
}

/* Separator and indent before an array element or object key. */
static void w_item(Writer *w, bool *first)
{
	if (!*first)
		w_raw(w, ",", 1);
	*first = false;
	if (w->pretty)
		w_newline(w);
}

static void w_key(Writer *w, bool *first, const char *key, size_t n)
{
	w_item(w, first);
	w_string(w, key, n);
	w_str(w, w->pretty ? ": " : ":");
}

static void w_u64(Writer *w, uint64_t v)
{
	char buf[20];
	size_t i = sizeof(buf);

	do {
		buf[--i] = (char) ('0' + v % 10);
		v /= 10;
	} while (v > 0);
	w_raw(w, buf + i, sizeof(buf) - i);
}

static void w_f64(Writer *w, double v)
{
	char buf[JSON_FLOAT_MAX];

	/* serde_json writes non-finite floats as null */
	if (!isfinite(v))
		w_str(w, "null");
	else
		w_raw(w, buf, json_format_f64(v, buf));
}

static void w_value(Writer *w, const json_t *v)
{
	const char *big = json_big_integer_text(v);
	const char *key;
	json_t *item;
	size_t i;
	bool first = true;

	if (big) {
		w_str(w, big);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		w_open(w, "{");
		json_object_foreach((json_t *) v, key, item) {
			w_key(w, &first, key, strlen(key));
			w_value(w, item);
		}
		w_close(w, "}", first);
		break;
	case JSON_ARRAY:
		w_open(w, "[");
		json_array_foreach(v, i, item) {
			w_item(w, &first);
			w_value(w, item);
		}
		w_close(w, "]", first);
		break;
	case JSON_STRING:
		w_string(w, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER: {
		char buf[24];

		w_raw(w, buf, (size_t) snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
						json_integer_value(v)));
		break;
	}
	case JSON_REAL:
		w_f64(w, json_real_value(v));
		break;
	case JSON_TRUE:
		w_str(w, "true");
		break;
	case JSON_FALSE:
		w_str(w, "false");
		break;
	case JSON_NULL:
		w_str(w, "null");
		break;
	}
}

/* ---- fields ---- */

static void f_null_or_str(Writer *w, const char *value)
{
	if (value)
		w_string(w, value, strlen(value));
	else
		w_str(w, "null");
}

static void f_extra(Writer *w, bool *first, const json_t *extra)
{
	const char *key;
	json_t *value;

	if (!extra)
		return;
	json_object_foreach((json_t *) extra, key, value) {
		w_key(w, first, key, strlen(key));
		w_value(w, value);
	}
}

/* ---- structs, by their field tables ---- */

static void write_struct(Writer *w, const StructFields *sf, const void *base);

static void write_field(Writer *w, bool *first, const Field *f, const void *base)
{
	w_item(w, first);
	w_raw(w, f->key, w->pretty ? f->key_len : f->key_len - 1);
	switch (f->type) {
	case FIELD_SCHEMA:
		w_str(w, "\"" RECORD_SCHEMA "\"");
		break;
	case FIELD_STRING:
	case FIELD_OPT_STRING:
		f_null_or_str(w, *FIELD_AT(base, f, char *));
		break;
	case FIELD_U64:
		w_u64(w, *FIELD_AT(base, f, uint64_t));
		break;
	case FIELD_OPT_U64: {
		const OptU64 *v = FIELD_AT(base, f, OptU64);

		if (v->set)
			w_u64(w, v->value);
		else
			w_str(w, "null");
		break;
	}
	case FIELD_OPT_F64: {
		const OptF64 *v = FIELD_AT(base, f, OptF64);

		if (v->set)
			w_f64(w, v->value);
		else
			w_str(w, "null");
		break;
	}
	case FIELD_ENUM: {
		int v = *FIELD_AT(base, f, int);

		f_null_or_str(w, v >= 0 && v < f->names->n ? f->names->names[v] : NULL);
		break;
	}
	case FIELD_OBJECT:
		write_struct(w, f->fields, FIELD_AT(base, f, char));
		break;
	case FIELD_ARRAY: {
		const char *items = *FIELD_AT(base, f, char *);
		size_t n = *(const size_t *)((const char *)base + f->count_offset);
		bool first_item = true;

		w_open(w, "[");
		for (size_t i = 0; i < n; i++) {
			w_item(w, &first_item);
			write_struct(w, f->fields, items + i * f->fields->size);
		}
		w_close(w, "]", first_item);
		break;
	}
	}
}

static void write_struct(Writer *w, const StructFields *sf, const void *base)
{
	bool first = true;

	w_open(w, "{");
	for (size_t i = 0; i < sf->n_fields; i++)
		write_field(w, &first, &sf->fields[i], base);
	f_extra(w, &first, *(json_t *const *)((const char *)base + sf->extra_offset));
	w_close(w, "}", first);
}

int json_write(const json_t *v, bool pretty, char **ret)
{
	Writer w = { .pretty = pretty };

	assert_return(v && ret, -EINVAL);

	w_value(&w, v);
	if (w.oom) {
		free(w.buf);
		return -ENOMEM;
	}
	*ret = w.buf;
	return 0;
}

int record_serialise(const RunProfile *p, bool pretty, char **ret)
{
	Writer w = { .pretty = pretty };

	assert_return(p && ret, -EINVAL);

	write_struct(&w, &run_profile_fields, p);
	if (w.oom) {
		free(w.buf);
		return -ENOMEM;
	}
	*ret = w.buf;
	return 0;
}
