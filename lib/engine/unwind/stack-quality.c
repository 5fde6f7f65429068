/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stack-quality.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "target-files.h"

/* perf's largest stack copy, and so the session's */
#define STACK_BYTES_MAX 65528ULL
/* more of the samples than this poor, and the report is worth a person's attention */
#define POOR_PERCENT 5
/* modules in the report at most, the worst first: it must stay small (metrics files) */
#define REPORT_MAX_MODULES 16

typedef struct QualityModule {
	char *path;
	char *shown; /* the path as a person is shown it (visible_copy()) */
	char *build_id;
	uint64_t ended[_UNWIND_END_MAX]; /* walks that ended here, by why */
	uint64_t continued;              /* ... that the frame-pointer chain carried on */
	uint64_t unnamed;                /* samples with a frame here nothing names */
	uint64_t stack_needed;           /* the most any stack-copy end would have needed */
	uint64_t stack_unknown;          /* stack-copy ends whose need nothing tells */
	StackQualityNaming naming;
	uint64_t last_sample;            /* counting: 1 + the sample that counted it last */
} QualityModule;

struct StackQuality {
	QualityModule *modules;
	uint32_t n_modules, modules_allocated;
	char *executable;
	uint64_t executable_weight; /* merged: the anonymous code of the process it is of */
	uint64_t samples, with_unnamed, unnamed_leaf, ended_early, continued;
};

int stack_quality_new(StackQuality **ret)
{
	StackQuality *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	*ret = q;
	return 0;
}

StackQuality *stack_quality_free(StackQuality *q)
{
	if (!q)
		return NULL;
	for (uint32_t i = 0; i < q->n_modules; i++) {
		free(q->modules[i].path);
		free(q->modules[i].shown);
		free(q->modules[i].build_id);
	}
	free(q->modules);
	free(q->executable);
	free(q);
	return NULL;
}

/*
 * A file's name is any bytes; a report holds UTF-8 without control characters
 * (C1 included: U+009B is a terminal's CSI), so that it can be JSON, be shown
 * on a terminal, and pass profd's checks: anything else becomes '?'.
 */
static size_t utf8_length(unsigned lead)
{
	if (lead < 0x80)
		return 1;
	if (lead >= 0xc2 && lead <= 0xdf)
		return 2;
	if (lead >= 0xe0 && lead <= 0xef)
		return 3;
	if (lead >= 0xf0 && lead <= 0xf4)
		return 4;
	return 0; /* a continuation byte, or a lead byte UTF-8 never uses */
}

static char *visible_copy(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *copy = malloc(n + 1);
	const unsigned char *u = (const unsigned char *)s;

	if (!copy)
		return NULL;
	for (size_t i = 0; i < n;) {
		unsigned c = u[i];
		size_t len = utf8_length(c);
		bool valid = len > 0 && i + len <= n;

		/* continuation bytes, and no overlong form, surrogate or code point past U+10FFFF */
		for (size_t k = 1; valid && k < len; k++)
			valid = (u[i + k] & 0xc0) == 0x80;
		if (valid && len > 1) {
			unsigned d = u[i + 1];

			valid = !(c == 0xe0 && d < 0xa0) && !(c == 0xed && d > 0x9f) &&
				!(c == 0xf0 && d < 0x90) && !(c == 0xf4 && d > 0x8f) &&
				!(c == 0xc2 && d < 0xa0);
		}
		if (!valid || c < 0x20 || c == 0x7f) {
			copy[o++] = '?';
			i++;
			continue;
		}
		memcpy(copy + o, s + i, len);
		o += len;
		i += len;
	}
	copy[o] = '\0';
	return copy;
}

int stack_quality_set_executable(StackQuality *q, const char *path)
{
	char *copy = visible_copy(path);

	if (!copy)
		return -ENOMEM;
	free(q->executable);
	q->executable = copy;
	return 0;
}

/* One file at one path: two containers' libc at the same path are two modules. */
static bool module_find(const StackQuality *q, const char *path, const char *build_id,
			uint32_t *ret_index)
{
	/* modules number in the tens */
	for (uint32_t i = 0; i < q->n_modules; i++) {
		const QualityModule *m = &q->modules[i];

		if (strcmp(m->path, path) == 0 &&
		    (m->build_id && build_id ? strcmp(m->build_id, build_id) == 0
					     : !m->build_id && !build_id)) {
			*ret_index = i;
			return true;
		}
	}
	return false;
}

int stack_quality_module(StackQuality *q, const char *path, const char *build_id,
			 uint32_t *ret_index)
{
	QualityModule *m;

	if (module_find(q, path, build_id, ret_index))
		return 0;
	if (ARRAY_RESERVE_U32(q->modules, q->modules_allocated, (size_t)q->n_modules + 1, 8) < 0)
		return -ENOMEM;
	m = &q->modules[q->n_modules];
	*m = (QualityModule){ .path = strdup(path),
			      .shown = visible_copy(path),
			      .build_id = build_id ? strdup(build_id) : NULL };
	if (!m->path || !m->shown || (build_id && !m->build_id)) {
		free(m->path);
		free(m->shown);
		free(m->build_id);
		return -ENOMEM;
	}
	*ret_index = q->n_modules++;
	return 0;
}

uint32_t stack_quality_n_modules(const StackQuality *q)
{
	return q->n_modules;
}

const char *stack_quality_module_path(const StackQuality *q, uint32_t module)
{
	return module < q->n_modules ? q->modules[module].path : NULL;
}

void stack_quality_set_naming(StackQuality *q, uint32_t module, StackQualityNaming naming)
{
	if (module < q->n_modules)
		q->modules[module].naming = naming;
}

void stack_quality_add_end(StackQuality *q, uint32_t module, UnwindEnd end, bool continued,
			   bool complete, uint64_t stack_needed)
{
	QualityModule *m;

	if (module >= q->n_modules || end >= _UNWIND_END_MAX || end == UNWIND_END_COMPLETE)
		return;
	m = &q->modules[module];
	m->ended[end]++;
	m->continued += continued;
	q->continued += continued;
	/* a walk the callchain carried to its end did not end early after all */
	q->ended_early += !complete;
	/* an estimate beyond any copy comes of a walk that read little of it: it tells nothing */
	if (end == UNWIND_END_STACK_COPY && (!complete || stack_needed > STACK_BYTES_MAX))
		m->stack_unknown++;
	else if (stack_needed > m->stack_needed)
		m->stack_needed = stack_needed;
}

static uint64_t module_weight(const QualityModule *m)
{
	uint64_t w = m->unnamed;

	for (int e = 0; e < _UNWIND_END_MAX; e++)
		w += m->ended[e];
	return w;
}

/* The weight of the anonymous code (JIT) 'q' saw: what its executable's hint is about. */
static uint64_t anonymous_weight(const StackQuality *q)
{
	uint32_t i;

	return module_find(q, STACK_QUALITY_ANONYMOUS, NULL, &i) ? module_weight(&q->modules[i])
								   : 0;
}

int stack_quality_merge(StackQuality *into, const StackQuality *from, uint32_t *ret_map)
{
	uint64_t weight = anonymous_weight(from);
	int k;

	/* the JIT hint names the runtime whose walks ended in anonymous code most (the counts
	 * before the unnamed frames are: ends alone) */
	if (from->executable && (!into->executable || weight > into->executable_weight)) {
		k = stack_quality_set_executable(into, from->executable);
		if (k < 0)
			return k;
		into->executable_weight = weight;
	}
	for (uint32_t i = 0; i < from->n_modules; i++) {
		const QualityModule *f = &from->modules[i];
		QualityModule *m;

		k = stack_quality_module(into, f->path, f->build_id, &ret_map[i]);
		if (k < 0)
			return k;
		m = &into->modules[ret_map[i]];
		for (int e = 0; e < _UNWIND_END_MAX; e++)
			m->ended[e] += f->ended[e];
		m->continued += f->continued;
		m->unnamed += f->unnamed;
		m->stack_unknown += f->stack_unknown;
		if (f->stack_needed > m->stack_needed)
			m->stack_needed = f->stack_needed;
		/* what one process's address space found to name it by, the file has */
		if (f->naming > m->naming)
			m->naming = f->naming;
	}
	into->samples += from->samples;
	into->with_unnamed += from->with_unnamed;
	into->unnamed_leaf += from->unnamed_leaf;
	into->ended_early += from->ended_early;
	into->continued += from->continued;
	return 0;
}

int stack_quality_count_unnamed(StackQuality *q, const Profile *p, const uint32_t *frame_module,
				uint32_t n)
{
	for (size_t i = 0; i < p->n_samples; i++) {
		uint32_t node = p->samples[i].stack;
		bool any = false, leaf = true;

		q->samples++;
		for (; node != PROFILE_NONE; node = p->stacks[node].parent, leaf = false) {
			uint32_t frame = p->stacks[node].frame;
			uint32_t mod = frame < n ? frame_module[frame] : 0;
			QualityModule *m;

			if (mod == 0 || mod > q->n_modules)
				continue;
			m = &q->modules[mod - 1];
			q->unnamed_leaf += leaf;
			any = true;
			/* once per sample and module */
			if (m->last_sample != i + 1) {
				m->last_sample = i + 1;
				m->unnamed++;
			}
		}
		q->with_unnamed += any;
	}
	return 0;
}

/* ---- reasons and hints ---- */

typedef struct Reason {
	const char *name;
	uint64_t samples;
	char *hint;
} Reason;

static const char *jit_hint(const char *executable)
{
	const char *base = executable ? strrchr(executable, '/') : NULL;

	base = base ? base + 1 : executable ?: "";
	if (strncmp(base, "node", 4) == 0)
		return "run node with --perf-basic-prof (a perf map) or --perf-prof (a jitdump file)";
	if (strcmp(base, "java") == 0)
		return "run java with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, or attach "
		       "perf-map-agent";
	if (strncmp(base, "python3", 7) == 0)
		return "run python 3.12 or later with -X perf (or PYTHONPERFSUPPORT=1)";
	if (strcmp(base, "dotnet") == 0)
		return "set DOTNET_PerfMapEnabled=1";
	return "make the runtime write /tmp/perf-PID.map or a jitdump file (its perf option)";
}

static const char *const fetch_names[_STACK_QUALITY_FETCH_MAX] = {
	[STACK_QUALITY_FETCH_UNSET] = "unset",         [STACK_QUALITY_FETCH_NOT_HERE] = "not-here",
	[STACK_QUALITY_FETCH_NOT_ASKED] = "not-asked", [STACK_QUALITY_FETCH_PENDING] = "pending",
	[STACK_QUALITY_FETCH_FAILED] = "failed",       [STACK_QUALITY_FETCH_FETCHED] = "fetched",
};

static const char *const fetch_hints[_STACK_QUALITY_FETCH_MAX] = {
	[STACK_QUALITY_FETCH_UNSET] = " or set DEBUGINFOD_URLS (for profd: the README's debuginfod "
				      "drop-in)",
	[STACK_QUALITY_FETCH_NOT_HERE] = "; DEBUGINFOD_URLS is set, but nothing fetches debug info "
					 "here (profctl --local never does): record through profd",
	[STACK_QUALITY_FETCH_NOT_ASKED] = "; the debuginfod servers were not asked for it",
	[STACK_QUALITY_FETCH_PENDING] = "; its debuginfod fetch is under way: later sessions will "
					"have the names",
	[STACK_QUALITY_FETCH_FAILED] =
	    "; the debuginfod servers had no debug info for this build-id "
	    "(or the fetch failed)",
	[STACK_QUALITY_FETCH_FETCHED] =
	    "; debuginfod has it now: later sessions will have the names",
};

/* What fetches there are when the caller does not say: none in this process. */
static StackQualityFetch fetch_state(StackQualityFetchFn fetch, void *userdata,
				     const char *build_id)
{
	const char *urls;
	StackQualityFetch state;

	if (fetch) {
		state = fetch(userdata, build_id);
		return state < _STACK_QUALITY_FETCH_MAX ? state : STACK_QUALITY_FETCH_NOT_ASKED;
	}
	urls = getenv("DEBUGINFOD_URLS");
	return urls && *urls ? STACK_QUALITY_FETCH_NOT_HERE : STACK_QUALITY_FETCH_UNSET;
}

static char *debug_hint(const QualityModule *m, const char *what, StackQualityFetch fetch)
{
	char *s;

	if (!m->build_id) {
		if (asprintf(&s,
			     "%s (no build-id: neither debuginfod nor a build-id path can find "
			     "its debug file): install its debug package (find the package with "
			     "`dpkg -S %s`)",
			     what, m->shown) < 0)
			return NULL;
		return s;
	}
	if (asprintf(&s,
		     "%s (build-id %s): install its debug package (find the package with `dpkg -S "
		     "%s`; Debian's debug packages are named PACKAGE-dbgsym)%s",
		     what, m->build_id, m->shown, fetch_hints[fetch]) < 0)
		return NULL;
	return s;
}

/*
 * The copy that would hold the stacks: known when the frame-pointer chain
 * finished them (else nothing tells how deep); a few it did not finish
 * (startup code without frame pointers) do not hide what the others tell.
 */
static uint64_t stack_copy_suggestion(const QualityModule *m, bool *ret_known)
{
	/* frames differ in size: half again, in whole pages */
	uint64_t want = (m->stack_needed * 3 / 2 + 4095) & ~4095ULL;
	uint64_t ends = m->ended[UNWIND_END_STACK_COPY];

	if (want > STACK_BYTES_MAX && m->stack_needed <= STACK_BYTES_MAX)
		want = STACK_BYTES_MAX;
	*ret_known = m->stack_unknown * 10 <= ends && m->stack_needed > 0 &&
		     want <= STACK_BYTES_MAX;
	return *ret_known ? want : STACK_BYTES_MAX;
}

static char *stack_copy_hint(const QualityModule *m)
{
	uint64_t ends = m->ended[UNWIND_END_STACK_COPY];
	bool known;
	uint64_t want = stack_copy_suggestion(m, &known);
	char *s;
	int r;

	if (known)
		r = asprintf(&s, "the stack copy is too small: --stack-bytes %" PRIu64
			     " would have held these stacks (%" PRIu64 " of %" PRIu64
			     " of known depth)", want, ends - m->stack_unknown, ends);
	else
		r = asprintf(
		    &s,
		    "the stack copy is too small: try --stack-bytes %" PRIu64 " (the largest), or "
		    "build with -fno-omit-frame-pointer so the frame-pointer chain finishes "
		    "deeper stacks (or use --backend perf-fp)",
		    want);
	return r < 0 ? NULL : s;
}

static const char *end_reason(UnwindEnd end, bool anonymous)
{
	switch (end) {
	case UNWIND_END_NO_MODULE:
		return anonymous ? "jit-without-map" : "no-module";
	case UNWIND_END_NO_CFI:
		return "no-cfi";
	case UNWIND_END_STACK_COPY:
		return "stack-copy";
	case UNWIND_END_DEPTH:
		return "depth-bound";
	default:
		return "broken-walk";
	}
}

static char *end_hint(const StackQuality *q, const QualityModule *m, UnwindEnd end, bool anonymous)
{
	switch (end) {
	case UNWIND_END_NO_MODULE:
		return strdup(anonymous ? jit_hint(q->executable)
					: "code in a file that is no ELF module (or no longer mapped)");
	case UNWIND_END_NO_CFI:
		return strdup("no unwind tables (CFI) for its code: build it with "
			      "-fasynchronous-unwind-tables, or with -fno-omit-frame-pointer so the "
			      "frame-pointer chain continues");
	case UNWIND_END_STACK_COPY:
		return stack_copy_hint(m);
	case UNWIND_END_DEPTH:
		return strdup("stacks deeper than the unwinder's depth bound are cut there");
	default:
		return strdup("the unwind information led nowhere (a corrupt stack, or code that "
			      "moves its frame in ways CFI does not describe)");
	}
}

static json_t *reason_json(const char *name, uint64_t samples, char *hint)
{
	json_t *o;

	if (!hint)
		return NULL;
	o = json_pack("{s:s, s:I, s:s}", "reason", name, "samples", (json_int_t)samples, "hint",
		      hint);
	free(hint);
	return o;
}

/* One entry per reason: a JIT without a map both ends stacks and leaves frames unnamed. */
static int add_reason(json_t *reasons, json_t *reason)
{
	const char *name = json_string_value(json_object_get(reason, "reason"));
	json_t *old;
	size_t i;

	if (!reason)
		return -ENOMEM;
	json_array_foreach(reasons, i, old)
		if (strcmp(json_string_value(json_object_get(old, "reason")), name) == 0) {
			if (json_integer_value(json_object_get(reason, "samples")) >
			    json_integer_value(json_object_get(old, "samples")))
				json_object_set(old, "samples", json_object_get(reason, "samples"));
			json_decref(reason);
			return 0;
		}
	return json_array_append_new(reasons, reason) == 0 ? 0 : -ENOMEM;
}

/* Why walks ended in 'm' with 'end'; a stack-copy end with the copy to ask for. NULL: ENOMEM. */
static json_t *end_reason_json(const StackQuality *q, const QualityModule *m, UnwindEnd end,
			       bool anonymous)
{
	json_t *why = reason_json(end_reason(end, anonymous), m->ended[end],
				  end_hint(q, m, end, anonymous));
	bool known;
	uint64_t want;

	if (!why || end != UNWIND_END_STACK_COPY)
		return why;
	want = stack_copy_suggestion(m, &known);
	if (json_object_set_new(why, "stack_bytes", json_integer((json_int_t)want)) < 0 ||
	    json_object_set_new(why, "stack_bytes_known", json_boolean(known)) < 0) {
		json_decref(why);
		return NULL;
	}
	return why;
}

/* Why frames of 'm' are unnamed; a module's with where debug info could come from. NULL: ENOMEM. */
static json_t *naming_reason_json(const StackQuality *q, const QualityModule *m, bool anonymous,
				  StackQualityFetchFn fetch, void *userdata)
{
	StackQualityFetch state;
	json_t *why;

	if (anonymous)
		return reason_json("jit-without-map", m->unnamed, strdup(jit_hint(q->executable)));
	state = m->build_id ? fetch_state(fetch, userdata, m->build_id)
			    : STACK_QUALITY_FETCH_NOT_ASKED;
	if (m->naming == STACK_QUALITY_NAMING_NONE)
		why = reason_json("no-symbols", m->unnamed,
				  debug_hint(m, "neither symbols nor debug info", state));
	else
		why = reason_json(
		    "no-debug-info", m->unnamed,
		    debug_hint(m,
			       "functions its symbol table does not list stay unnamed "
			       "without debug info",
			       state));
	if (why &&
	    json_object_set_new(why, "debuginfod",
				m->build_id ? json_string(fetch_names[state]) : json_null()) < 0) {
		json_decref(why);
		return NULL;
	}
	return why;
}

static int module_json(const StackQuality *q, const QualityModule *m, StackQualityFetchFn fetch,
		       void *userdata, json_t **ret)
{
	bool anonymous = strcmp(m->path, STACK_QUALITY_ANONYMOUS) == 0;
	json_t *reasons = json_array(), *o;
	uint64_t ended = 0;
	int r = reasons ? 0 : -ENOMEM;

	for (int e = 0; e < _UNWIND_END_MAX && r >= 0; e++) {
		ended += m->ended[e];
		if (m->ended[e] > 0)
			r = add_reason(reasons, end_reason_json(q, m, e, anonymous));
	}
	if (m->unnamed > 0 && r >= 0)
		r = add_reason(reasons, naming_reason_json(q, m, anonymous, fetch, userdata));
	if (r < 0) {
		json_decref(reasons);
		return r;
	}
	o = json_pack("{s:s, s:s?, s:I, s:I, s:o}", "module", m->shown, "build_id", m->build_id,
		      "samples_ended_here", (json_int_t)ended, "samples_unnamed_here",
		      (json_int_t)m->unnamed, "reasons", reasons);
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}

static int weight_compare(const void *a, const void *b)
{
	uint64_t x = module_weight(*(const QualityModule *const *)a);
	uint64_t y = module_weight(*(const QualityModule *const *)b);

	return x > y ? -1 : x < y;
}

static bool is_poor(uint64_t samples, uint64_t ended, uint64_t unnamed)
{
	return samples > 0 && (ended * 100 > samples * POOR_PERCENT ||
			       unnamed * 100 > samples * POOR_PERCENT);
}

/* The modules worth reporting, the worst first, at most REPORT_MAX_MODULES. */
static int worst_modules(const StackQuality *q, const QualityModule ***ret, uint32_t *ret_n)
{
	const QualityModule **order = calloc(q->n_modules + 1, sizeof(*order));
	uint32_t n = 0;

	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < q->n_modules; i++)
		if (module_weight(&q->modules[i]) > 0)
			order[n++] = &q->modules[i];
	qsort(order, n, sizeof(*order), weight_compare);
	*ret = order;
	*ret_n = n < REPORT_MAX_MODULES ? n : REPORT_MAX_MODULES;
	return 0;
}

int stack_quality_to_json(const StackQuality *q, StackQualityFetchFn fetch, void *userdata,
			  json_t **ret)
{
	_cleanup_free_ const QualityModule **order = NULL;
	json_t *modules = json_array(), *o;
	uint32_t n;
	int r;

	r = modules ? worst_modules(q, &order, &n) : -ENOMEM;
	if (r < 0) {
		json_decref(modules);
		return r;
	}
	for (uint32_t i = 0; i < n; i++) {
		json_t *m;

		r = module_json(q, order[i], fetch, userdata, &m);
		if (r < 0 || json_array_append_new(modules, m) < 0) {
			json_decref(modules);
			return r < 0 ? r : -ENOMEM;
		}
	}
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:b, s:o}", "samples", (json_int_t)q->samples,
		      "ended_early", (json_int_t)q->ended_early, "continued_by_frame_pointers",
		      (json_int_t)q->continued, "with_unnamed_frames", (json_int_t)q->with_unnamed,
		      "unnamed_leaf", (json_int_t)q->unnamed_leaf, "poor",
		      is_poor(q->samples, q->ended_early, q->with_unnamed), "modules", modules);
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}

/* ---- the wire: the counts from the unwinder to profd ---- */

static const char *const naming_names[] = {
	[STACK_QUALITY_NAMING_UNKNOWN] = "unknown",
	[STACK_QUALITY_NAMING_NONE] = "none",
	[STACK_QUALITY_NAMING_SYMBOLS] = "symbols",
	[STACK_QUALITY_NAMING_DWARF] = "dwarf",
};

static json_t *module_wire(const QualityModule *m)
{
	json_t *ended = json_array();

	for (int e = 0; ended && e < _UNWIND_END_MAX; e++)
		if (json_array_append_new(ended, json_integer((json_int_t)m->ended[e])) < 0) {
			json_decref(ended);
			return NULL;
		}
	if (!ended)
		return NULL;
	return json_pack("{s:s, s:s?, s:s, s:o, s:I, s:I, s:I, s:I}", "path", m->shown, "build_id",
			 m->build_id, "naming", naming_names[m->naming], "ended", ended,
			 "continued", (json_int_t)m->continued, "unnamed", (json_int_t)m->unnamed,
			 "stack_needed", (json_int_t)m->stack_needed, "stack_unknown",
			 (json_int_t)m->stack_unknown);
}

int stack_quality_to_wire(const StackQuality *q, char **ret, size_t *ret_size)
{
	_cleanup_free_ const QualityModule **order = NULL;
	_cleanup_(json_decrefp) json_t *o = NULL;
	json_t *modules = json_array();
	char *s;
	uint32_t n;
	int r;

	r = modules ? worst_modules(q, &order, &n) : -ENOMEM;
	for (uint32_t i = 0; r >= 0 && i < n; i++)
		if (json_array_append_new(modules, module_wire(order[i])) < 0)
			r = -ENOMEM;
	if (r < 0) {
		json_decref(modules);
		return r;
	}
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:s?, s:o}", "samples", (json_int_t)q->samples,
		      "with_unnamed", (json_int_t)q->with_unnamed, "unnamed_leaf",
		      (json_int_t)q->unnamed_leaf, "ended_early", (json_int_t)q->ended_early,
		      "continued", (json_int_t)q->continued, "executable", q->executable, "modules",
		      modules);
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (!s)
		return -ENOMEM;
	if (strlen(s) > STACK_QUALITY_WIRE_MAX) {
		free(s);
		return -EFBIG;
	}
	*ret_size = strlen(s);
	*ret = s;
	return 0;
}

/* An integer in [0, max]. */
static int wire_integer(const json_t *v, uint64_t max, uint64_t *ret)
{
	json_int_t n;

	if (!json_is_integer(v))
		return -EBADMSG;
	n = json_integer_value(v);
	if (n < 0 || (uint64_t)n > max)
		return -EBADMSG;
	*ret = (uint64_t)n;
	return 0;
}

static int wire_count(const json_t *o, const char *key, uint64_t max, uint64_t *ret)
{
	return wire_integer(json_object_get(o, key), max, ret);
}

/* A name to show a person: 1..max bytes, no NUL, no control characters; null when 'nullable'. */
static int wire_name(const json_t *v, size_t max, bool nullable, const char **ret)
{
	const char *s;
	size_t n;

	if (nullable && (!v || json_is_null(v))) {
		*ret = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return -EBADMSG;
	s = json_string_value(v);
	n = json_string_length(v);
	if (n == 0 || n > max || strlen(s) != n)
		return -EBADMSG;
	/* jansson checked the UTF-8; control characters, C1 (U+0080..U+009F) too, are refused */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f ||
		    ((unsigned char)s[i] == 0xc2 && (unsigned char)s[i + 1] < 0xa0))
			return -EBADMSG;
	*ret = s;
	return 0;
}

/* A build-id as the resolver writes it: lower-case hex, an even number of digits. */
static bool build_id_valid(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return s[n] == '\0' && n % 2 == 0 && n >= 2 && n <= 2 * TARGET_FILE_BUILD_ID_MAX;
}

static int module_from_wire(StackQuality *q, const json_t *o, uint64_t max)
{
	const json_t *ended = json_object_get(o, "ended");
	const char *path, *build_id, *naming;
	uint64_t all = 0, v = 0;
	uint32_t index;
	QualityModule *m;
	int r;

	if (!json_is_object(o) || json_object_size(o) != 8 || !json_is_array(ended) ||
	    json_array_size(ended) != _UNWIND_END_MAX)
		return -EBADMSG;
	r = wire_name(json_object_get(o, "path"), PATH_MAX, false, &path);
	if (r >= 0)
		r = wire_name(json_object_get(o, "build_id"), 2 * TARGET_FILE_BUILD_ID_MAX, true,
			      &build_id);
	if (r >= 0)
		r = wire_name(json_object_get(o, "naming"), 16, false, &naming);
	if (r < 0 || (build_id && !build_id_valid(build_id)))
		return -EBADMSG;
	/* each module once: a second entry would be counted twice */
	if (module_find(q, path, build_id, &index))
		return -EBADMSG;
	r = stack_quality_module(q, path, build_id, &index);
	if (r < 0)
		return r;
	m = &q->modules[index];
	m->naming = _STACK_QUALITY_NAMING_MAX;
	for (size_t i = 0; i < ELEMENTSOF(naming_names); i++)
		if (strcmp(naming, naming_names[i]) == 0)
			m->naming = (StackQualityNaming)i;
	for (int e = 0; e < _UNWIND_END_MAX && r >= 0; e++) {
		r = wire_integer(json_array_get(ended, e), max, &v);
		m->ended[e] = r < 0 ? 0 : v;
		all += v;
	}
	if (r < 0 || m->naming == _STACK_QUALITY_NAMING_MAX || m->ended[UNWIND_END_COMPLETE] > 0 ||
	    all > max)
		return -EBADMSG;
	if (wire_count(o, "continued", all, &m->continued) < 0 ||
	    wire_count(o, "unnamed", max, &m->unnamed) < 0 ||
	    wire_count(o, "stack_needed", STACK_BYTES_MAX, &m->stack_needed) < 0 ||
	    wire_count(o, "stack_unknown", m->ended[UNWIND_END_STACK_COPY], &m->stack_unknown) < 0)
		return -EBADMSG;
	return 0;
}

int stack_quality_from_wire(const char *data, size_t size, uint64_t max_samples, StackQuality **ret)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	_cleanup_(stack_quality_freep) StackQuality *q = NULL;
	const json_t *modules, *m;
	const char *executable;
	size_t i;
	int r;

	if (size > STACK_QUALITY_WIRE_MAX)
		return -EBADMSG;
	o = json_loadb(data, size, JSON_REJECT_DUPLICATES, NULL);
	modules = json_object_get(o, "modules");
	if (!json_is_object(o) || json_object_size(o) != 7 || !json_is_array(modules) ||
	    json_array_size(modules) > REPORT_MAX_MODULES)
		return -EBADMSG;
	r = stack_quality_new(&q);
	if (r < 0)
		return r;
	if (wire_count(o, "samples", max_samples, &q->samples) < 0 ||
	    wire_count(o, "with_unnamed", q->samples, &q->with_unnamed) < 0 ||
	    wire_count(o, "unnamed_leaf", q->samples, &q->unnamed_leaf) < 0 ||
	    wire_count(o, "ended_early", max_samples, &q->ended_early) < 0 ||
	    wire_count(o, "continued", max_samples, &q->continued) < 0 ||
	    wire_name(json_object_get(o, "executable"), PATH_MAX, true, &executable) < 0)
		return -EBADMSG;
	if (executable) {
		r = stack_quality_set_executable(q, executable);
		if (r < 0)
			return r;
	}
	json_array_foreach(modules, i, m) {
		r = module_from_wire(q, m, max_samples);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(q);
	return 0;
}

static uint64_t get_u64(const json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	return v > 0 ? (uint64_t)v : 0;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* 's' for a terminal: a control character in a file's name must not become an escape sequence */
static void print_visible(const char *s, FILE *out)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

int stack_quality_print(const json_t *report, FILE *out)
{
	uint64_t samples = get_u64(report, "samples");
	uint64_t ended = get_u64(report, "ended_early"), unnamed = get_u64(report, "with_unnamed_frames");
	const json_t *modules = json_object_get(report, "modules"), *m;
	size_t i, shown = 0;

	if (!json_is_object(report) || !json_is_array(modules))
		return -EINVAL;
	if (!is_poor(samples, ended, unnamed))
		return 0;
	fprintf(out, "stack quality: %.0f%% of %" PRIu64 " stacks end early, %.0f%% have unnamed "
		"frames\n", percent(ended, samples), samples, percent(unnamed, samples));
	json_array_foreach(modules, i, m) {
		const json_t *reasons = json_object_get(m, "reasons"), *why;
		size_t j;

		json_array_foreach(reasons, j, why) {
			uint64_t n = get_u64(why, "samples");
			const char *hint = json_string_value(json_object_get(why, "hint"));

			/* the reasons that matter: a few lines, not an inventory */
			if (shown >= 6 || n * 100 < samples)
				continue;
			fputs("  ", out);
			print_visible(json_string_value(json_object_get(m, "module")) ?: "?", out);
			fprintf(out, ": %.0f%% of samples, ", percent(n, samples));
			print_visible(json_string_value(json_object_get(why, "reason")) ?: "?",
				      out);
			fputs(": ", out);
			print_visible(hint ?: "", out);
			fputc('\n', out);
			shown++;
		}
	}
	return 1;
}
