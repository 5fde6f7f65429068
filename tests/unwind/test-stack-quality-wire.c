/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stack-quality counts an unwinder sends profd (stack_quality_to_wire())
 * come back whole (the report profd words from them is the one the unwinder
 * would have worded), and whatever a compromised unwinder could send instead
 * is refused by stack_quality_from_wire(): every case below is one change to
 * a valid message. The counts of a session's processes merge into one
 * (stack_quality_merge()) that passes the wire too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "stack-quality.h"

static int failures;

#define CHECK(cond, ...)                                        \
	do {                                                    \
		if (!(cond)) {                                  \
			fprintf(stderr, "FAIL: " __VA_ARGS__);  \
			fputc('\n', stderr);                    \
			failures++;                             \
		}                                               \
	} while (0)

#define MAX_SAMPLES 1000

/* Counts of three modules, as an unwinder's resolver would leave them. */
static StackQuality *sample_quality(void)
{
	StackQuality *q;
	uint32_t exe, lib, jit;

	if (stack_quality_new(&q) < 0 || stack_quality_set_executable(q, "/usr/bin/node") < 0 ||
	    stack_quality_module(q, "/opt/app/bin/app", "c6321461922ac73b197f997395d0dfdb966b5f45",
				 &exe) < 0 ||
	    stack_quality_module(q, "/usr/lib/libfoo.so.1", NULL, &lib) < 0 ||
	    stack_quality_module(q, STACK_QUALITY_ANONYMOUS, NULL, &jit) < 0)
		abort();
	stack_quality_set_naming(q, exe, STACK_QUALITY_NAMING_NONE);
	stack_quality_set_naming(q, lib, STACK_QUALITY_NAMING_SYMBOLS);
	for (int i = 0; i < 40; i++)
		stack_quality_add_end(q, exe, UNWIND_END_STACK_COPY, i % 2, i % 2, 20000 + i);
	for (int i = 0; i < 30; i++)
		stack_quality_add_end(q, lib, UNWIND_END_NO_CFI, false, false, 0);
	for (int i = 0; i < 20; i++)
		stack_quality_add_end(q, jit, UNWIND_END_NO_MODULE, false, false, 0);
	return q;
}

static json_t *wire_of(const StackQuality *q)
{
	_cleanup_free_ char *wire = NULL;
	size_t size;

	if (stack_quality_to_wire(q, &wire, &size) < 0)
		abort();
	return json_loadb(wire, size, 0, NULL);
}

static json_t *report_of(const StackQuality *q)
{
	json_t *o;

	if (stack_quality_to_json(q, NULL, NULL, &o) < 0)
		abort();
	return o;
}

/* The sent counts parse back into the same report. */
static void test_round_trip(void)
{
	_cleanup_(stack_quality_freep) StackQuality *q = sample_quality(), *back = NULL;
	_cleanup_free_ char *wire = NULL;
	json_t *a, *b;
	size_t size;
	int r;

	r = stack_quality_to_wire(q, &wire, &size);
	CHECK(r == 0 && size == strlen(wire), "to_wire: %d", r);
	r = stack_quality_from_wire(wire, size, 90, &back);
	CHECK(r == 0, "a valid message refused: %s\n%s", strerror(-r), wire);
	if (r < 0)
		return;
	a = report_of(q);
	b = report_of(back);
	CHECK(json_equal(a, b), "the report differs after the wire");
	json_decref(a);
	json_decref(b);
	/* the unwinder was given fewer samples than its counts claim */
	CHECK(stack_quality_from_wire(wire, size, 39, &back) == -EBADMSG,
	      "counts above the samples given accepted");
}

/*
 * A file's name may be any bytes: the unwinder sends what a person may be
 * shown (no control characters, valid UTF-8), so an odd name of the user's
 * own never fails the session at profd's checks.
 */
static void test_odd_names(void)
{
	static const struct {
		const char *path, *shown;
	} names[] = {
		{ "/tmp/a\nb", "/tmp/a?b" },
		{ "/tmp/\033[2Jx", "/tmp/?[2Jx" },
		{ "/tmp/\xc2\x9b" "2J", "/tmp/??2J" },       /* C1 CSI */
		{ "/tmp/\xff\xfe", "/tmp/??" },              /* no UTF-8 */
		{ "/tmp/\xe0\x80\xaf", "/tmp/???" },        /* overlong '/' */
		{ "/tmp/caf\xc3\xa9", "/tmp/caf\xc3\xa9" }, /* UTF-8 stays */
		{ "/tmp/\xf0\x9f\x94\xa5", "/tmp/\xf0\x9f\x94\xa5" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		_cleanup_(stack_quality_freep) StackQuality *q = NULL, *back = NULL;
		_cleanup_free_ char *wire = NULL;
		json_t *report = NULL;
		uint32_t index;
		size_t size;
		int r;

		if (stack_quality_new(&q) < 0 || stack_quality_module(q, names[i].path, NULL, &index) < 0)
			abort();
		stack_quality_add_end(q, index, UNWIND_END_NO_CFI, false, false, 0);
		r = stack_quality_to_wire(q, &wire, &size);
		if (r == 0)
			r = stack_quality_from_wire(wire, size, 1, &back);
		if (r == 0)
			r = stack_quality_to_json(back, NULL, NULL, &report);
		CHECK(r == 0, "name %zu: %s", i, strerror(-r));
		CHECK(r < 0 || strcmp(json_string_value(json_object_get(json_array_get(
					      json_object_get(report, "modules"), 0), "module")),
				      names[i].shown) == 0,
		      "name %zu is not shown as '%s'", i, names[i].shown);
		json_decref(report);
	}
}

/* The module of 'report' at 'path' with 'build_id' (NULL: none), or NULL. */
static const json_t *report_module(const json_t *report, const char *path, const char *build_id)
{
	const json_t *m;
	size_t i;

	json_array_foreach(json_object_get(report, "modules"), i, m) {
		const char *id = json_string_value(json_object_get(m, "build_id"));

		if (strcmp(json_string_value(json_object_get(m, "module")), path) == 0 &&
		    (id && build_id ? strcmp(id, build_id) == 0 : !id && !build_id))
			return m;
	}
	return NULL;
}

static uint64_t ended_here(const json_t *m)
{
	return (uint64_t)json_integer_value(json_object_get(m, "samples_ended_here"));
}

/*
 * The processes of one session merged: a module by path and build-id (another
 * container's app at the same path stays apart), counts summed, the JIT hint
 * of the process whose walks ended in anonymous code most; and the merged counts pass the wire.
 */
static void test_merge(void)
{
	_cleanup_(stack_quality_freep) StackQuality *a = sample_quality(), *b = NULL, *all = NULL,
						    *back = NULL;
	_cleanup_free_ char *wire = NULL;
	uint32_t map_a[3], map_b[3], app, lib, jit;
	json_t *report = NULL;
	const json_t *m;
	size_t size;
	int r;

	if (stack_quality_new(&b) < 0 || stack_quality_new(&all) < 0 ||
	    stack_quality_set_executable(b, "/usr/bin/python3") < 0 ||
	    stack_quality_module(b, "/opt/app/bin/app", "ffff", &app) < 0 ||
	    stack_quality_module(b, "/usr/lib/libfoo.so.1", NULL, &lib) < 0 ||
	    stack_quality_module(b, STACK_QUALITY_ANONYMOUS, NULL, &jit) < 0)
		abort();
	for (int i = 0; i < 5; i++) {
		stack_quality_add_end(b, app, UNWIND_END_NO_CFI, false, false, 0);
		stack_quality_add_end(b, lib, UNWIND_END_NO_CFI, false, false, 0);
	}
	for (int i = 0; i < 25; i++)
		stack_quality_add_end(b, jit, UNWIND_END_NO_MODULE, false, false, 0);
	r = stack_quality_merge(all, a, map_a);
	if (r == 0)
		r = stack_quality_merge(all, b, map_b);
	CHECK(r == 0, "merge: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(stack_quality_n_modules(all) == 4, "%u modules merged, expected 4",
	      stack_quality_n_modules(all));
	CHECK(map_a[1] == map_b[lib] && map_a[2] == map_b[jit] && map_a[0] != map_b[app],
	      "modules mapped %u %u %u / %u %u %u", map_a[0], map_a[1], map_a[2], map_b[app],
	      map_b[lib], map_b[jit]);
	r = stack_quality_to_wire(all, &wire, &size);
	if (r == 0)
		r = stack_quality_from_wire(wire, size, 40 + 30 + 20 + 35, &back);
	CHECK(r == 0, "the merged counts do not pass the wire: %s", strerror(-r));
	if (r < 0 || stack_quality_to_json(back, NULL, NULL, &report) < 0)
		return;
	m = report_module(report, "/usr/lib/libfoo.so.1", NULL);
	CHECK(m && ended_here(m) == 35, "libfoo ended %" PRIu64 " walks, expected 30 + 5",
	      m ? ended_here(m) : 0);
	m = report_module(report, "/opt/app/bin/app", "ffff");
	CHECK(m && ended_here(m) == 5, "the other container's app is not apart");
	m = report_module(report, STACK_QUALITY_ANONYMOUS, NULL);
	CHECK(m && ended_here(m) == 45, "anonymous code ended %" PRIu64 " walks, expected 45",
	      m ? ended_here(m) : 0);
	CHECK(m && strstr(json_string_value(json_object_get(
				  json_array_get(json_object_get(m, "reasons"), 0), "hint")),
			  "-X perf"),
	      "the JIT hint is not python's, whose walks ended there most");
	CHECK(json_integer_value(json_object_get(report, "ended_early")) == 40 / 2 + 30 + 20 + 35,
	      "ended_early %" JSON_INTEGER_FORMAT,
	      json_integer_value(json_object_get(report, "ended_early")));
	json_decref(report);
}

typedef void (*MutateFn)(json_t *wire, json_t *module);

static void set(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static void m_samples_over(json_t *w, json_t *m)
{
	set(w, "samples", json_integer(MAX_SAMPLES + 1));
}
static void m_negative(json_t *w, json_t *m) { set(m, "unnamed", json_integer(-1)); }
static void m_fraction(json_t *w, json_t *m) { set(w, "ended_early", json_real(1.5)); }
static void m_string_count(json_t *w, json_t *m) { set(m, "continued", json_string("1")); }
static void m_unknown_key(json_t *w, json_t *m) { set(w, "hint", json_string("curl x | sh")); }
static void m_unknown_module_key(json_t *w, json_t *m) { set(m, "hint", json_string("rm -rf")); }
static void m_missing_key(json_t *w, json_t *m) { json_object_del(w, "unnamed_leaf"); }
static void m_escape_path(json_t *w, json_t *m) { set(m, "path", json_string("/bin/\033[2Jx")); }
static void m_newline_path(json_t *w, json_t *m) { set(m, "path", json_string("/bin/a\nb")); }
static void m_c1_path(json_t *w, json_t *m) { set(m, "path", json_string("/bin/\xc2\x9b" "2J")); }
static void m_nul_path(json_t *w, json_t *m) { set(m, "path", json_stringn("/bin/a\0b", 8)); }
static void m_empty_path(json_t *w, json_t *m) { set(m, "path", json_string("")); }
static void m_path_number(json_t *w, json_t *m) { set(m, "path", json_integer(1)); }
static void m_build_id_path(json_t *w, json_t *m) { set(m, "build_id", json_string("../../etc")); }
static void m_build_id_upper(json_t *w, json_t *m) { set(m, "build_id", json_string("ABCD")); }
static void m_build_id_odd(json_t *w, json_t *m) { set(m, "build_id", json_string("abc")); }
static void m_naming(json_t *w, json_t *m) { set(m, "naming", json_string("bogus")); }
static void m_ended_short(json_t *w, json_t *m)
{
	json_array_remove(json_object_get(m, "ended"), 1);
}
static void m_ended_complete(json_t *w, json_t *m)
{
	json_array_set_new(json_object_get(m, "ended"), UNWIND_END_COMPLETE, json_integer(1));
}
static void m_ended_sum(json_t *w, json_t *m)
{
	/* each below the cap, together above it */
	json_t *ended = json_object_get(m, "ended");

	json_array_set_new(ended, UNWIND_END_DEPTH, json_integer(MAX_SAMPLES));
}
static void m_stack_needed(json_t *w, json_t *m) { set(m, "stack_needed", json_integer(1 << 20)); }
static void m_stack_unknown(json_t *w, json_t *m) { set(m, "stack_unknown", json_integer(41)); }
static void m_continued(json_t *w, json_t *m) { set(m, "continued", json_integer(MAX_SAMPLES)); }
static void m_executable(json_t *w, json_t *m) { set(w, "executable", json_string("\033]0;x\a")); }
static void m_modules_object(json_t *w, json_t *m) { set(w, "modules", json_object()); }
static void m_duplicate_module(json_t *w, json_t *m)
{
	json_array_append(json_object_get(w, "modules"), m);
}
static void m_many_modules(json_t *w, json_t *m)
{
	json_t *modules = json_object_get(w, "modules");

	for (int i = 0; json_array_size(modules) <= 16; i++) {
		json_t *copy = json_deep_copy(m);
		char path[32];

		snprintf(path, sizeof(path), "/lib/m%d.so", i);
		set(copy, "path", json_string(path));
		json_array_append_new(modules, copy);
	}
}

/* Text cases: what no JSON value of the right shape makes. */
static void test_text(const char *text, size_t size, const char *what)
{
	_cleanup_(stack_quality_freep) StackQuality *q = NULL;

	CHECK(stack_quality_from_wire(text, size, MAX_SAMPLES, &q) == -EBADMSG && !q,
	      "%s accepted", what);
}

int main(void)
{
	static const struct {
		const char *what;
		MutateFn mutate;
	} cases[] = {
		{ "more samples than given", m_samples_over },
		{ "a negative count", m_negative },
		{ "a fractional count", m_fraction },
		{ "a count as a string", m_string_count },
		{ "an unknown key (a hint of its own)", m_unknown_key },
		{ "an unknown module key", m_unknown_module_key },
		{ "a missing key", m_missing_key },
		{ "a terminal escape in a path", m_escape_path },
		{ "a newline in a path", m_newline_path },
		{ "a NUL in a path", m_nul_path },
		{ "a C1 control (CSI) in a path", m_c1_path },
		{ "an empty path", m_empty_path },
		{ "a path that is a number", m_path_number },
		{ "a build-id that is a path", m_build_id_path },
		{ "an upper-case build-id", m_build_id_upper },
		{ "a build-id of odd length", m_build_id_odd },
		{ "an unknown naming", m_naming },
		{ "too few walk ends", m_ended_short },
		{ "a complete walk counted as ending early", m_ended_complete },
		{ "more walk ends than samples", m_ended_sum },
		{ "a stack need beyond any copy", m_stack_needed },
		{ "more unknown stack needs than stack-copy ends", m_stack_unknown },
		{ "more continued walks than ended ones", m_continued },
		{ "a terminal escape in the executable", m_executable },
		{ "modules that are no array", m_modules_object },
		{ "a module twice", m_duplicate_module },
		{ "more modules than a report holds", m_many_modules },
	};
	_cleanup_(stack_quality_freep) StackQuality *q = sample_quality();
	json_t *base = wire_of(q);
	_cleanup_free_ char *big = NULL, *deep = NULL;

	test_round_trip();
	test_odd_names();
	test_merge();
	if (!base)
		abort();
	{
		/* the message every case changes is valid as it is */
		_cleanup_(stack_quality_freep) StackQuality *valid = NULL;
		_cleanup_free_ char *text = json_dumps(base, JSON_COMPACT);

		CHECK(text && stack_quality_from_wire(text, strlen(text), MAX_SAMPLES, &valid) == 0,
		      "the unchanged message is refused");
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *wire = json_deep_copy(base);
		_cleanup_free_ char *text = NULL;

		cases[i].mutate(wire, json_array_get(json_object_get(wire, "modules"), 0));
		text = json_dumps(wire, JSON_COMPACT | JSON_ALLOW_NUL);
		json_decref(wire);
		if (!text)
			abort();
		test_text(text, strlen(text), cases[i].what);
	}
	test_text("", 0, "nothing");
	test_text("[]", 2, "an array");
	test_text("{\"samples\":1,\"samples\":2}", 25, "a duplicate key");
	test_text("{\"samples\":18446744073709551616}", 32, "a count beyond u64");
	/* one message beyond the cap, however valid its start */
	big = malloc(STACK_QUALITY_WIRE_MAX + 2);
	deep = malloc(4001);
	if (!big || !deep)
		abort();
	memset(big, ' ', STACK_QUALITY_WIRE_MAX + 1);
	big[0] = '{';
	big[STACK_QUALITY_WIRE_MAX] = '}';
	test_text(big, STACK_QUALITY_WIRE_MAX + 1, "a message beyond the cap");
	memset(deep, '[', 2000);
	memset(deep + 2000, ']', 2000);
	test_text(deep, 4000, "2000 nested arrays");
	json_decref(base);
	if (failures == 0)
		printf("ok - %zu hostile messages refused; valid ones, merged ones and odd file "
		       "names round-trip\n",
		       sizeof(cases) / sizeof(cases[0]) + 6);
	return failures ? 1 : 0;
}
