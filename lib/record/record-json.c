/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyhog-profile-v1 serialisation, byte-identical to serde_json's to_string
 * and to_string_pretty of the seed's structs: struct field order, two-space
 * indent, "key": value, [] and {} when empty, serde_json string escapes and
 * ryu floats. Unknown fields of a parsed record follow the known ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "json-number.h"
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
	if (w->len + n + 1 > w->size) {
		/* a typical record is a few KiB */
		size_t size = (w->len + n + 1) * 2 < 8192 ? 8192 : (w->len + n + 1) * 2;
		char *p = realloc(w->buf, size);

		if (!p) {
			w->oom = true;
			return;
		}
		w->buf = p;
		w->size = size;
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

static void f_str(Writer *w, bool *first, const char *name, const char *value)
{
	w_key(w, first, name, strlen(name));
	if (value)
		w_string(w, value, strlen(value));
	else
		w_str(w, "null");
}

static void f_u64(Writer *w, bool *first, const char *name, uint64_t value)
{
	w_key(w, first, name, strlen(name));
	w_u64(w, value);
}

static void f_opt_u64(Writer *w, bool *first, const char *name, OptU64 value)
{
	w_key(w, first, name, strlen(name));
	if (value.set)
		w_u64(w, value.value);
	else
		w_str(w, "null");
}

static void f_opt_f64(Writer *w, bool *first, const char *name, OptF64 value)
{
	w_key(w, first, name, strlen(name));
	if (value.set)
		w_f64(w, value.value);
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

/* ---- structs ---- */

static void write_identity(Writer *w, const RunIdentity *id)
{
	bool first = true;

	w_open(w, "{");
	f_str(w, &first, "run_id", id->run_id);
	f_str(w, &first, "binary_version", id->binary_version);
	f_str(w, &first, "detector_digest", id->detector_digest);
	f_str(w, &first, "config_digest", id->config_digest);
	f_str(w, &first, "source_kind", id->source_kind);
	f_str(w, &first, "workload_class", id->workload_class);
	f_str(w, &first, "backend_requested", id->backend_requested);
	f_str(w, &first, "backend_selected", id->backend_selected);
	f_str(w, &first, "cache_state", cache_state_to_string(id->cache_state));
	f_str(w, &first, "daemon_state", daemon_state_to_string(id->daemon_state));
	f_u64(w, &first, "scanner_threads", id->scanner_threads);
	f_opt_u64(w, &first, "reader_threads", id->reader_threads);
	f_u64(w, &first, "logical_cpus", id->logical_cpus);
	f_extra(w, &first, id->extra);
	w_close(w, "}", first);
}

static void write_stage(Writer *w, const StageMeasurement *s)
{
	bool first = true;

	w_open(w, "{");
	f_str(w, &first, "stage", stage_to_string(s->stage));
	f_u64(w, &first, "elapsed_ns", s->elapsed_ns);
	f_u64(w, &first, "calls", s->calls);
	f_u64(w, &first, "attributed_ns", s->attributed_ns);
	f_extra(w, &first, s->extra);
	w_close(w, "}", first);
}

static void write_transition(Writer *w, const StateTransition *t)
{
	bool first = true;

	w_open(w, "{");
	f_str(w, &first, "state", run_state_to_string(t->state));
	f_u64(w, &first, "elapsed_ns", t->elapsed_ns);
	f_extra(w, &first, t->extra);
	w_close(w, "}", first);
}

static void write_state(Writer *w, const StateMeasurement *s)
{
	bool first = true;

	w_open(w, "{");
	f_str(w, &first, "state", run_state_to_string(s->state));
	f_u64(w, &first, "elapsed_ns", s->elapsed_ns);
	f_opt_u64(w, &first, "cpu_time_ms", s->cpu_time_ms);
	f_opt_u64(w, &first, "aggregate_cpu_milli_percent", s->aggregate_cpu_milli_percent);
	f_opt_u64(w, &first, "resident_start_bytes", s->resident_start_bytes);
	f_opt_u64(w, &first, "resident_end_bytes", s->resident_end_bytes);
	f_opt_u64(w, &first, "threads_start", s->threads_start);
	f_opt_u64(w, &first, "threads_end", s->threads_end);
	f_extra(w, &first, s->extra);
	w_close(w, "}", first);
}

static void write_snapshot(Writer *w, const ResourceSnapshot *s)
{
	bool first = true;

	w_open(w, "{");
	f_opt_u64(w, &first, "cpu_time_ms", s->cpu_time_ms);
	f_opt_u64(w, &first, "resident_bytes", s->resident_bytes);
	f_opt_u64(w, &first, "virtual_bytes", s->virtual_bytes);
	f_opt_u64(w, &first, "thread_count", s->thread_count);
	f_extra(w, &first, s->extra);
	w_close(w, "}", first);
}

static void write_sample(Writer *w, const ResourceSample *s)
{
	bool first = true;

	w_open(w, "{");
	f_str(w, &first, "state", run_state_to_string(s->state));
	f_u64(w, &first, "elapsed_ns", s->elapsed_ns);
	w_key(w, &first, "snapshot", strlen("snapshot"));
	write_snapshot(w, &s->snapshot);
	f_extra(w, &first, s->extra);
	w_close(w, "}", first);
}

static void write_usage(Writer *w, const ResourceUsage *u)
{
	bool first = true;

	w_open(w, "{");
	w_key(w, &first, "start", strlen("start"));
	write_snapshot(w, &u->start);
	w_key(w, &first, "finish", strlen("finish"));
	write_snapshot(w, &u->finish);
	f_opt_u64(w, &first, "max_observed_resident_bytes", u->max_observed_resident_bytes);
	f_opt_u64(w, &first, "max_observed_threads", u->max_observed_threads);
	f_opt_f64(w, &first, "aggregate_cpu_percent", u->aggregate_cpu_percent);
	f_extra(w, &first, u->extra);
	w_close(w, "}", first);
}

#define WRITE_ARRAY(w, first, name, items, n, write_one)        \
	do {                                                    \
		bool _first_ = true;                            \
		w_key((w), (first), (name), strlen(name));      \
		w_open((w), "[");                               \
		for (size_t _i_ = 0; _i_ < (n); _i_++) {        \
			w_item((w), &_first_);                  \
			write_one((w), &(items)[_i_]);          \
		}                                               \
		w_close((w), "]", _first_);                     \
	} while (0)

int record_serialise(const RunProfile *p, bool pretty, char **ret)
{
	Writer w = { .pretty = pretty };
	bool first = true;

	w_open(&w, "{");
	f_str(&w, &first, "schema", RECORD_SCHEMA);
	w_key(&w, &first, "identity", strlen("identity"));
	write_identity(&w, &p->identity);
	f_str(&w, &first, "status", run_state_to_string(p->status));
	f_u64(&w, &first, "wall_time_ns", p->wall_time_ns);
	f_u64(&w, &first, "input_bytes", p->input_bytes);
	f_u64(&w, &first, "input_units", p->input_units);
	WRITE_ARRAY(&w, &first, "stages", p->stages, p->n_stages, write_stage);
	WRITE_ARRAY(&w, &first, "transitions", p->transitions, p->n_transitions, write_transition);
	WRITE_ARRAY(&w, &first, "states", p->states, p->n_states, write_state);
	WRITE_ARRAY(&w, &first, "resource_samples", p->resource_samples, p->n_resource_samples,
		    write_sample);
	w_key(&w, &first, "resources", strlen("resources"));
	write_usage(&w, &p->resources);
	f_extra(&w, &first, p->extra);
	w_close(&w, "}", first);

	if (w.oom) {
		free(w.buf);
		return -ENOMEM;
	}
	*ret = w.buf;
	return 0;
}
