/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stack-quality.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

/* perf's largest stack copy, and so the session's */
#define STACK_BYTES_MAX 65528ULL
/* more of the samples than this poor, and the report is worth a person's attention */
#define POOR_PERCENT 5
/* modules in the report at most, the worst first: it must stay small (metrics files) */
#define REPORT_MAX_MODULES 16

typedef struct QualityModule {
	char *path;
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
	uint32_t n_modules;
	char *executable;
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
		free(q->modules[i].build_id);
	}
	free(q->modules);
	free(q->executable);
	free(q);
	return NULL;
}

int stack_quality_set_executable(StackQuality *q, const char *path)
{
	char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	free(q->executable);
	q->executable = copy;
	return 0;
}

int stack_quality_module(StackQuality *q, const char *path, const char *build_id,
			 uint32_t *ret_index)
{
	QualityModule *a, *m;

	/* modules number in the tens */
	for (uint32_t i = 0; i < q->n_modules; i++)
		if (strcmp(q->modules[i].path, path) == 0) {
			*ret_index = i;
			return 0;
		}
	a = reallocarray(q->modules, q->n_modules + 1, sizeof(QualityModule));
	if (!a)
		return -ENOMEM;
	q->modules = a;
	m = &q->modules[q->n_modules];
	*m = (QualityModule){ .path = strdup(path), .build_id = build_id ? strdup(build_id) : NULL };
	if (!m->path || (build_id && !m->build_id)) {
		free(m->path);
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

static char *debug_hint(const QualityModule *m, const char *what)
{
	char *s;

	if (asprintf(&s,
		     "%s (build-id %s): install its debug package (find the package with `dpkg -S "
		     "%s`; Debian's debug packages are named PACKAGE-dbgsym) or set DEBUGINFOD_URLS",
		     what, m->build_id ?: "none", m->path) < 0)
		return NULL;
	return s;
}

static char *stack_copy_hint(const QualityModule *m)
{
	/* frames differ in size: half again, in whole pages */
	uint64_t want = (m->stack_needed * 3 / 2 + 4095) & ~4095ULL;
	uint64_t ends = m->ended[UNWIND_END_STACK_COPY];
	char *s;
	int r;

	/*
	 * Known when the frame-pointer chain finished the stacks; else nothing
	 * tells how deep. A few it did not finish (startup code without frame
	 * pointers) do not hide what the others tell.
	 */
	if (want > STACK_BYTES_MAX && m->stack_needed <= STACK_BYTES_MAX)
		want = STACK_BYTES_MAX;
	if (m->stack_unknown * 10 <= ends && m->stack_needed > 0 && want <= STACK_BYTES_MAX)
		r = asprintf(&s, "the stack copy is too small: --stack-bytes %" PRIu64
			     " would have held these stacks (%" PRIu64 " of %" PRIu64
			     " of known depth)", want, ends - m->stack_unknown, ends);
	else
		r = asprintf(&s,
			     "the stack copy is too small: try --stack-bytes %llu (the largest), or "
			     "build with -fno-omit-frame-pointer so the frame-pointer chain finishes "
			     "deeper stacks (or use --backend perf-fp)",
			     STACK_BYTES_MAX);
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

static int module_json(const StackQuality *q, const QualityModule *m, json_t **ret)
{
	bool anonymous = strcmp(m->path, STACK_QUALITY_ANONYMOUS) == 0;
	json_t *reasons = json_array(), *o;
	uint64_t ended = 0;
	int r = reasons ? 0 : -ENOMEM;

	for (int e = 0; e < _UNWIND_END_MAX && r >= 0; e++) {
		ended += m->ended[e];
		if (m->ended[e] > 0)
			r = add_reason(reasons, reason_json(end_reason(e, anonymous), m->ended[e],
							    end_hint(q, m, e, anonymous)));
	}
	if (m->unnamed > 0 && r >= 0) {
		if (anonymous)
			r = add_reason(reasons, reason_json("jit-without-map", m->unnamed,
							    strdup(jit_hint(q->executable))));
		else if (m->naming == STACK_QUALITY_NAMING_NONE)
			r = add_reason(reasons, reason_json("no-symbols", m->unnamed,
							    debug_hint(m, "neither symbols nor debug info")));
		else
			r = add_reason(reasons,
				       reason_json("no-debug-info", m->unnamed,
						   debug_hint(m, "functions its symbol table does not "
								 "list stay unnamed without debug info")));
	}
	if (r < 0) {
		json_decref(reasons);
		return r;
	}
	o = json_pack("{s:s, s:s?, s:I, s:I, s:o}", "module", m->path, "build_id", m->build_id,
		      "samples_ended_here", (json_int_t)ended, "samples_unnamed_here",
		      (json_int_t)m->unnamed, "reasons", reasons);
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}

static uint64_t module_weight(const QualityModule *m)
{
	uint64_t w = m->unnamed;

	for (int e = 0; e < _UNWIND_END_MAX; e++)
		w += m->ended[e];
	return w;
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

int stack_quality_to_json(const StackQuality *q, json_t **ret)
{
	_cleanup_free_ const QualityModule **order = calloc(q->n_modules + 1, sizeof(*order));
	json_t *modules = json_array(), *o;
	uint32_t n = 0;
	int r;

	if (!order || !modules) {
		json_decref(modules);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < q->n_modules; i++)
		if (module_weight(&q->modules[i]) > 0)
			order[n++] = &q->modules[i];
	qsort(order, n, sizeof(*order), weight_compare);
	if (n > REPORT_MAX_MODULES)
		n = REPORT_MAX_MODULES;
	for (uint32_t i = 0; i < n; i++) {
		json_t *m;

		r = module_json(q, order[i], &m);
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

static uint64_t get_u64(const json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	return v > 0 ? (uint64_t)v : 0;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
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
			fprintf(out, "  %s: %.0f%% of samples, %s: %s\n",
				json_string_value(json_object_get(m, "module")) ?: "?",
				percent(n, samples),
				json_string_value(json_object_get(why, "reason")) ?: "?", hint ?: "");
			shown++;
		}
	}
	return 1;
}
