/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parser's strictness and the serialiser's serde_json details beyond the
 * fixtures: each case edits valid/full.json once and checks what is refused
 * (by path) or kept (exactly). Usage: test-record-parse FIXTURES_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "record.h"
#include "record-test.h"

static char *full;

/* full.json with the first `from` replaced by `to`. */
static char *edit(const char *from, const char *to)
{
	const char *at = strstr(full, from);
	char *out;

	if (!at) {
		fprintf(stderr, "FAIL test bug: '%s' not in full.json\n", from);
		exit(1);
	}
	if (asprintf(&out, "%.*s%s%s", (int) (at - full), full, to, at + strlen(from)) < 0)
		abort();
	return out;
}

static void refused(const char *from, const char *to, const char *path)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	_cleanup_free_ char *doc = edit(from, to), *error = NULL;
	size_t n = strlen(path);
	int r;

	r = record_parse(doc, strlen(doc), &p, &error);
	CHECK(r == -EINVAL, "'%s' -> '%s': expected refusal, got %d", from, to, r);
	CHECK(error && strncmp(error, path, n) == 0 && strncmp(error + n, ": ", 2) == 0,
	      "'%s' -> '%s': error should name '%s', got '%s'", from, to, path,
	      error ?: "(null)");
}

/* Accepted; the pretty serialisation contains `expect` and round-trips. */
static RunProfile *accepted(const char *from, const char *to, const char *expect)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL, *again = NULL;
	_cleanup_free_ char *doc = edit(from, to), *error = NULL, *out = NULL;
	int r;

	r = record_parse(doc, strlen(doc), &p, &error);
	CHECK(r == 0, "'%s' -> '%s': refused: %s", from, to, error ?: strerror(-r));
	if (r < 0)
		return NULL;
	r = record_serialise(p, true, &out);
	CHECK(r == 0, "serialise failed");
	if (r < 0)
		return NULL;
	CHECK(!expect || strstr(out, expect), "'%s' -> '%s': output lacks '%s'", from, to, expect);
	r = record_parse(out, strlen(out), &again, NULL);
	CHECK(r == 0 && run_profile_equal(p, again), "'%s' -> '%s': round-trip changed values",
	      from, to);
	return TAKE_PTR(p);
}

static void test_integers(void)
{
	static const char *const not_u64[] = {
		"1.0", "1e3", "-1", "\"5\"", "true", "null", "[]", "{}", "-9223372036854775809",
		"18446744073709551616", "99999999999999999999999",
	};
	RunProfile *p;

	for (size_t i = 0; i < sizeof(not_u64) / sizeof(*not_u64); i++) {
		_cleanup_free_ char *to = NULL;

		if (asprintf(&to, "\"input_bytes\": %s", not_u64[i]) < 0)
			abort();
		refused("\"input_bytes\": 734003200", to, "input_bytes");
	}
	refused("\"scanner_threads\": 8", "\"scanner_threads\": 8.5", "identity.scanner_threads");
	refused("\"elapsed_ns\": 1250000", "\"elapsed_ns\": -1", "transitions[1].elapsed_ns");
	refused("\"cpu_time_ms\": 121", "\"cpu_time_ms\": -121",
		"resource_samples[1].snapshot.cpu_time_ms");
	refused("\"threads_end\": 9", "\"threads_end\": 9.0", "states[1].threads_end");
	refused("\"max_observed_threads\": 11", "\"max_observed_threads\": \"11\"",
		"resources.max_observed_threads");

	/* above i64 but within u64: exact, both ways */
	p = accepted("\"wall_time_ns\": 1990123456", "\"wall_time_ns\": 9223372036854775808",
		     "\"wall_time_ns\": 9223372036854775808,");
	CHECK(p && p->wall_time_ns == UINT64_C(9223372036854775808), "2^63 not kept");
	run_profile_free(p);
	p = accepted("\"calls\": 77000", "\"calls\": 18446744073709551615",
		     "\"calls\": 18446744073709551615,");
	CHECK(p && p->stages[4].calls == UINT64_MAX, "u64::MAX calls not kept");
	run_profile_free(p);
}

static void test_structure(void)
{
	refused("\"schema\": \"keyhog-profile-v1\"", "\"schema\": 1", "schema");
	refused("\"schema\": \"keyhog-profile-v1\",", "", "schema");
	refused("\"identity\": {", "\"identity\": [], \"x\": {", "identity");
	refused("\"states\": [", "\"states\": null, \"x\": [", "states");
	refused("\"transitions\": [", "\"transitions\": {}, \"x\": [", "transitions");
	refused("\"stages\": [\n    {", "\"stages\": [\n    7, {", "stages[0]");
	refused("\"state\": \"scanning\",\n      \"elapsed_ns\": 41500000",
		"\"state\": \"sCanning\",\n      \"elapsed_ns\": 41500000", "transitions[2].state");
	refused("\"daemon_state\": \"worker\"", "\"daemon_state\": null", "identity.daemon_state");
	refused("\"backend_selected\": \"simd\"", "\"backend_selected\": 5",
		"identity.backend_selected");
	refused("\"start\": {", "\"begin\": {", "resources.start");
	refused("\"snapshot\": {", "\"snap\": {", "resource_samples[0].snapshot");
	refused("\"aggregate_cpu_percent\": 757.7423046314318", "\"aggregate_cpu_percent\": \"x\"",
		"resources.aggregate_cpu_percent");
	refused("\"stage\": \"entropy\"", "\"stage\": \"Entropy\"", "stages[4].stage");

	/* documents that are not JSON, or not one object */
	refused("\"status\": \"completed\",", "\"status\": \"completed\", \"status\": \"failed\",",
		"document");
	refused("\"run_id\": \"4242", "\"run_id\": \"\\u0000", "document");
	refused("\"run_id\": \"4242", "\"big\": 99999999999999999999, \"run_id\": \"\\u0000",
		"document");
	refused("\"input_units\": 5120", "\"input_units\": 0123", "document");
	refused("\"input_units\": 5120", "\"input_units\": 5120,", "document");
	refused("\"run_id\": \"4242", "\"run_id\": \"\xff\xfe", "document");
	{
		_cleanup_(run_profile_freep) RunProfile *p = NULL;
		_cleanup_free_ char *error = NULL;
		const char *docs[] = { "", "null", "5", "\"keyhog-profile-v1\"", "{}", "{} {}" };

		for (size_t i = 0; i < sizeof(docs) / sizeof(*docs); i++) {
			int r = record_parse(docs[i], strlen(docs[i]), &p, &error);

			CHECK(r == -EINVAL && !p && error, "document '%s' not refused", docs[i]);
			free(TAKE_PTR(error));
		}
	}
}

static void test_optional_and_unknown(void)
{
	RunProfile *p;

	p = accepted("\"reader_threads\": 2", "\"reader_threads\": null",
		     "\"reader_threads\": null,");
	CHECK(p && !p->identity.reader_threads.set, "reader_threads null not kept");
	run_profile_free(p);
	p = accepted("\"cpu_time_ms\": 1,\n", "", "\"cpu_time_ms\": null,");
	run_profile_free(p);
	p = accepted("\"aggregate_cpu_percent\": 757.7423046314318",
		     "\"aggregate_cpu_percent\": 12", "\"aggregate_cpu_percent\": 12.0\n");
	run_profile_free(p);

	/* unknown fields at every level are kept, in order, after the known ones */
	p = accepted("\"calls\": 1,", "\"calls\": 1, \"zz\": 123456789012345678901234567890, "
				      "\"aa\": -5,",
		     "\"attributed_ns\": 0,\n      \"zz\": 123456789012345678901234567890,\n"
		     "      \"aa\": -5\n    }");
	run_profile_free(p);
	p = accepted("\"thread_count\": 1\n      }",
		     "\"thread_count\": 1, \"x\": {\"a\": [1, 2.5, \"s\\n\", null, true, {}], "
		     "\"b\": []}\n      }",
		     "\"x\": {\n          \"a\": [\n            1,\n            2.5,\n"
		     "            \"s\\n\",\n            null,\n            true,\n"
		     "            {}\n          ],\n          \"b\": []\n        }");
	run_profile_free(p);

	/* serde_json's string escapes: control characters, quote, backslash; not / or UTF-8 */
	p = accepted("\"run_id\": \"4242-1764460800000000000-0\"",
		     "\"run_id\": \"a\\\"b\\\\c\\u0001\\u001f\\b\\f\\t\\r\\n\\/\\u00e9\\u007f\"",
		     "\"run_id\": \"a\\\"b\\\\c\\u0001\\u001f\\b\\f\\t\\r\\n/\xc3\xa9\x7f\"");
	run_profile_free(p);
}

static void test_floats(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "0.0", "0.0" },
		{ "-0.0", "-0.0" },
		{ "0.1", "0.1" },
		{ "0.001", "0.001" },
		{ "0.0001234", "0.0001234" },
		{ "0.00001234", "0.00001234" },
		{ "0.000001234", "1.234e-6" },
		{ "1.5e-7", "1.5e-7" },
		{ "100", "100.0" },
		{ "1e15", "1000000000000000.0" },
		{ "1e16", "1e16" },
		{ "1.2345678901234567e16", "1.2345678901234568e16" },
		{ "123456789.125", "123456789.125" },
		{ "1e300", "1e300" },
		{ "5e-324", "5e-324" },
		{ "1.7976931348623157e308", "1.7976931348623157e308" },
		{ "757.7423046314318", "757.7423046314318" },
		{ "18446744073709551615", "1.8446744073709552e19" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		_cleanup_free_ char *to = NULL, *expect = NULL;

		if (asprintf(&to, "\"aggregate_cpu_percent\": %s", cases[i].in) < 0 ||
		    asprintf(&expect, "\"aggregate_cpu_percent\": %s\n", cases[i].out) < 0)
			abort();
		run_profile_free(accepted("\"aggregate_cpu_percent\": 757.7423046314318", to,
					  expect));
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	full = read_fixture(argv[1], "valid", "full", ".json", NULL);
	test_integers();
	test_structure();
	test_optional_and_unknown();
	test_floats();
	free(full);
	return test_result();
}
