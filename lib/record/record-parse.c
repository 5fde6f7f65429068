/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict keyhog-profile-v1 parser (DESIGN.md §2): serde's rules for the seed's
 * structs, plus a fixed schema and objects only. Every refusal names the JSON
 * path of the offending field. Unknown fields are kept in `extra`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "json-number.h"
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

/* An enum variant by wire name, via one of the *_from_string()/_to_string() pairs. */
static int parse_enum(Parser *p, const json_t *v, int (*from_string)(const char *),
		      const char *(*to_string)(int), int max, int *ret)
{
	int r;

	if (!json_is_string(v) || json_big_integer_text(v))
		return fail_type(p, v, "a string (enum variant)");
	r = from_string(json_string_value(v));
	if (r < 0) {
		char expected[256] = "";
		size_t n = 0;

		/* stages are too many to list usefully */
		for (int i = 0; max <= 8 && i < max; i++) {
			int w = snprintf(expected + n, sizeof(expected) - n, "%s%s",
					 i > 0 ? ", " : ", expected one of ", to_string(i));
			n += w > 0 ? (size_t) w : 0;
		}
		return fail(p, "unknown variant \"%.40s\"%s", json_string_value(v), expected);
	}
	*ret = r;
	return 0;
}

#define DEFINE_ENUM_PARSER(type, prefix, max)                                                \
	static const char *prefix##_name(int i)                                             \
	{                                                                                    \
		return prefix##_to_string((type) i);                                         \
	}                                                                                    \
	static int parse_##prefix(Parser *p, const json_t *v, type *ret)                     \
	{                                                                                    \
		int value, r;                                                                \
		r = parse_enum(p, v, prefix##_from_string, prefix##_name, max, &value);      \
		if (r < 0)                                                                   \
			return r;                                                            \
		*ret = (type) value;                                                         \
		return 0;                                                                    \
	}

DEFINE_ENUM_PARSER(Stage, stage, _STAGE_MAX)
DEFINE_ENUM_PARSER(RunState, run_state, _RUN_STATE_MAX)
DEFINE_ENUM_PARSER(CacheState, cache_state, _CACHE_STATE_MAX)
DEFINE_ENUM_PARSER(DaemonState, daemon_state, _DAEMON_STATE_MAX)

/* Reading one JSON object: the known fields read so far, to tell the unknown ones. */
typedef struct ObjectReader {
	const json_t *obj;
	const char *known[16];
	size_t n_known;
} ObjectReader;

static int object_begin(Parser *p, const json_t *v, ObjectReader *ret)
{
	if (!json_is_object(v))
		return fail_type(p, v, "an object");
	*ret = (ObjectReader) { .obj = v };
	return 0;
}

/* Gather the fields no FIELD() read into *ret_extra (NULL when none), to keep them. */
static int object_end(const ObjectReader *o, json_t **ret_extra)
{
	_cleanup_(json_decrefp) json_t *extra = NULL;
	const char *key;
	json_t *value;

	json_object_foreach((json_t *) o->obj, key, value) {
		bool known = false;

		for (size_t i = 0; i < o->n_known && !known; i++)
			known = strcmp(o->known[i], key) == 0;
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

static int fail_missing(Parser *p, const char *name)
{
	size_t saved = path_push_field(p, name);
	int r = fail(p, "missing field");

	path_pop(p, saved);
	return r;
}

/*
 * Read field `name` of the object o with the name on the path: parse_expr sees
 * the value as `v` (NULL when absent and not required).
 */
#define FIELD(p, o, name, is_required, parse_expr)                                     \
	({                                                                               \
		const json_t *v = json_object_get((o)->obj, (name));                     \
		int _r_;                                                                 \
		(o)->known[(o)->n_known++] = (name);                                     \
		if ((is_required) && !v)                                                 \
			_r_ = fail_missing((p), (name));                                 \
		else {                                                                   \
			size_t _saved_ = path_push_field((p), (name));                   \
			_r_ = (parse_expr);                                              \
			path_pop((p), _saved_);                                          \
		}                                                                        \
		_r_;                                                                     \
	})

#define TRY(expr)                       \
	do {                            \
		int _t_ = (expr);       \
		if (_t_ < 0)            \
			return _t_;     \
	} while (0)

static int parse_identity(Parser *p, const json_t *obj, RunIdentity *id)
{
	ObjectReader o = {};

	TRY(object_begin(p, obj, &o));
	TRY(FIELD(p, &o, "run_id", true, parse_string(p, v, false, &id->run_id)));
	TRY(FIELD(p, &o, "binary_version", true, parse_string(p, v, false, &id->binary_version)));
	TRY(FIELD(p, &o, "detector_digest", true, parse_string(p, v, false, &id->detector_digest)));
	TRY(FIELD(p, &o, "config_digest", true, parse_string(p, v, false, &id->config_digest)));
	TRY(FIELD(p, &o, "source_kind", true, parse_string(p, v, false, &id->source_kind)));
	TRY(FIELD(p, &o, "workload_class", true, parse_string(p, v, false, &id->workload_class)));
	TRY(FIELD(p, &o, "backend_requested", true,
		  parse_string(p, v, false, &id->backend_requested)));
	TRY(FIELD(p, &o, "backend_selected", false,
		  parse_string(p, v, true, &id->backend_selected)));
	TRY(FIELD(p, &o, "cache_state", true, parse_cache_state(p, v, &id->cache_state)));
	TRY(FIELD(p, &o, "daemon_state", true, parse_daemon_state(p, v, &id->daemon_state)));
	TRY(FIELD(p, &o, "scanner_threads", true, parse_u64(p, v, &id->scanner_threads)));
	TRY(FIELD(p, &o, "reader_threads", false, parse_opt_u64(p, v, &id->reader_threads)));
	TRY(FIELD(p, &o, "logical_cpus", true, parse_u64(p, v, &id->logical_cpus)));
	return object_end(&o, &id->extra);
}

static int parse_stage_measurement(Parser *p, const json_t *obj, void *ret)
{
	StageMeasurement *s = ret;
	ObjectReader o = {};

	TRY(object_begin(p, obj, &o));
	TRY(FIELD(p, &o, "stage", true, parse_stage(p, v, &s->stage)));
	TRY(FIELD(p, &o, "elapsed_ns", true, parse_u64(p, v, &s->elapsed_ns)));
	TRY(FIELD(p, &o, "calls", true, parse_u64(p, v, &s->calls)));
	TRY(FIELD(p, &o, "attributed_ns", true, parse_u64(p, v, &s->attributed_ns)));
	return object_end(&o, &s->extra);
}

static int parse_transition(Parser *p, const json_t *obj, void *ret)
{
	StateTransition *t = ret;
	ObjectReader o = {};

	TRY(object_begin(p, obj, &o));
	TRY(FIELD(p, &o, "state", true, parse_run_state(p, v, &t->state)));
	TRY(FIELD(p, &o, "elapsed_ns", true, parse_u64(p, v, &t->elapsed_ns)));
	return object_end(&o, &t->extra);
}

static int parse_state_measurement(Parser *p, const json_t *obj, void *ret)
{
	StateMeasurement *s = ret;
	ObjectReader o = {};

	TRY(object_begin(p, obj, &o));
	TRY(FIELD(p, &o, "state", true, parse_run_state(p, v, &s->state)));
	TRY(FIELD(p, &o, "elapsed_ns", true, parse_u64(p, v, &s->elapsed_ns)));
	TRY(FIELD(p, &o, "cpu_time_ms", false, parse_opt_u64(p, v, &s->cpu_time_ms)));
	TRY(FIELD(p, &o, "aggregate_cpu_milli_percent", false,
		  parse_opt_u64(p, v, &s->aggregate_cpu_milli_percent)));
	TRY(FIELD(p, &o, "resident_start_bytes", false,
		  parse_opt_u64(p, v, &s->resident_start_bytes)));
	TRY(FIELD(p, &o, "resident_end_bytes", false,
		  parse_opt_u64(p, v, &s->resident_end_bytes)));
	TRY(FIELD(p, &o, "threads_start", false, parse_opt_u64(p, v, &s->threads_start)));
	TRY(FIELD(p, &o, "threads_end", false, parse_opt_u64(p, v, &s->threads_end)));
	return object_end(&o, &s->extra);
}

static int parse_snapshot(Parser *p, const json_t *obj, ResourceSnapshot *s)
{
	ObjectReader o = {};

	TRY(object_begin(p, obj, &o));
	TRY(FIELD(p, &o, "cpu_time_ms", false, parse_opt_u64(p, v, &s->cpu_time_ms)));
	TRY(FIELD(p, &o, "resident_bytes", false, parse_opt_u64(p, v, &s->resident_bytes)));
	TRY(FIELD(p, &o, "virtual_bytes", false, parse_opt_u64(p, v, &s->virtual_bytes)));
	TRY(FIELD(p, &o, "thread_count", false, parse_opt_u64(p, v, &s->thread_count)));
	return object_end(&o, &s->extra);
}

static int parse_resource_sample(Parser *p, const json_t *obj, void *ret)
{
	ResourceSample *s = ret;
	ObjectReader o = {};

	TRY(object_begin(p, obj, &o));
	TRY(FIELD(p, &o, "state", true, parse_run_state(p, v, &s->state)));
	TRY(FIELD(p, &o, "elapsed_ns", true, parse_u64(p, v, &s->elapsed_ns)));
	TRY(FIELD(p, &o, "snapshot", true, parse_snapshot(p, v, &s->snapshot)));
	return object_end(&o, &s->extra);
}

static int parse_usage(Parser *p, const json_t *obj, ResourceUsage *u)
{
	ObjectReader o = {};

	TRY(object_begin(p, obj, &o));
	TRY(FIELD(p, &o, "start", true, parse_snapshot(p, v, &u->start)));
	TRY(FIELD(p, &o, "finish", true, parse_snapshot(p, v, &u->finish)));
	TRY(FIELD(p, &o, "max_observed_resident_bytes", false,
		  parse_opt_u64(p, v, &u->max_observed_resident_bytes)));
	TRY(FIELD(p, &o, "max_observed_threads", false,
		  parse_opt_u64(p, v, &u->max_observed_threads)));
	TRY(FIELD(p, &o, "aggregate_cpu_percent", false,
		  parse_opt_f64(p, v, &u->aggregate_cpu_percent)));
	return object_end(&o, &u->extra);
}

typedef int (*ParseElementFn)(Parser *p, const json_t *v, void *ret);

/*
 * An array whose elements parse_one fills; *ret_n counts the elements filled
 * so far, so run_profile_free() frees a partial array after a refusal.
 */
static int parse_array(Parser *p, const json_t *v, bool absent_ok, size_t size,
		       ParseElementFn parse_one, void *ret_items, size_t *ret_n)
{
	char *items;
	int r = 0;

	if (absent_ok && !v)
		return 0;
	if (!json_is_array(v))
		return fail_type(p, v, "an array");
	if (json_array_size(v) == 0)
		return 0;
	items = calloc(json_array_size(v), size);
	if (!items)
		return -ENOMEM;
	*(void **) ret_items = items;
	for (size_t i = 0; r >= 0 && i < json_array_size(v); i++) {
		size_t saved = path_push_index(p, i);

		*ret_n = i + 1;
		r = parse_one(p, json_array_get(v, i), items + i * size);
		path_pop(p, saved);
	}
	return r;
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

static int parse_profile(Parser *p, const json_t *obj, RunProfile *rp)
{
	ObjectReader o = {};

	TRY(object_begin(p, obj, &o));
	TRY(FIELD(p, &o, "schema", true, parse_schema(p, v)));
	TRY(FIELD(p, &o, "identity", true, parse_identity(p, v, &rp->identity)));
	TRY(FIELD(p, &o, "status", true, parse_run_state(p, v, &rp->status)));
	TRY(FIELD(p, &o, "wall_time_ns", true, parse_u64(p, v, &rp->wall_time_ns)));
	TRY(FIELD(p, &o, "input_bytes", true, parse_u64(p, v, &rp->input_bytes)));
	TRY(FIELD(p, &o, "input_units", true, parse_u64(p, v, &rp->input_units)));
	TRY(FIELD(p, &o, "stages", true,
		  parse_array(p, v, false, sizeof(StageMeasurement), parse_stage_measurement,
			      &rp->stages, &rp->n_stages)));
	TRY(FIELD(p, &o, "transitions", true,
		  parse_array(p, v, false, sizeof(StateTransition), parse_transition,
			      &rp->transitions, &rp->n_transitions)));
	/* serde(default): absent is empty, but null is still a type error */
	TRY(FIELD(p, &o, "states", false,
		  parse_array(p, v, true, sizeof(StateMeasurement), parse_state_measurement,
			      &rp->states, &rp->n_states)));
	TRY(FIELD(p, &o, "resource_samples", true,
		  parse_array(p, v, false, sizeof(ResourceSample), parse_resource_sample,
			      &rp->resource_samples, &rp->n_resource_samples)));
	TRY(FIELD(p, &o, "resources", true, parse_usage(p, v, &rp->resources)));
	return object_end(&o, &rp->extra);
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
	r = parse_profile(&p, root, rp);
	if (r >= 0)
		*ret = TAKE_PTR(rp);
finish:
	if (r == -EINVAL && ret_error)
		*ret_error = TAKE_PTR(p.error);
	free(p.error);
	return r < 0 ? r : 0;
}
