/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keyhog-profile-v1 reference fixtures (tests/fixtures/, made by the
 * format's reference implementation):
 * valid ones parse, render byte-identically, serialise back as serde_json
 * does and round-trip; invalid ones are refused naming the field; the u64
 * edge round-trips exactly. Usage: test-record-fixtures FIXTURES_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "record.h"
#include "record-test.h"

static const char *fixtures;

static void check_roundtrip(const char *name, const RunProfile *p, bool pretty)
{
	_cleanup_(run_profile_freep) RunProfile *again = NULL;
	_cleanup_free_ char *json = NULL, *error = NULL;
	int r;

	r = record_serialise(p, pretty, &json);
	CHECK(r == 0, "%s: serialise failed: %s", name, strerror(-r));
	if (r < 0)
		return;
	r = record_parse(json, strlen(json), &again, &error);
	CHECK(r == 0, "%s: re-parse of own %s output failed: %s", name,
	      pretty ? "pretty" : "compact", error ?: strerror(-r));
	if (r == 0)
		CHECK(run_profile_equal(p, again), "%s: %s round-trip changed values", name,
		      pretty ? "pretty" : "compact");
}

/* name: fixture base name; exact_json: pretty output must equal the file. */
static void test_valid(const char *name, bool has_text, bool exact_json)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	_cleanup_free_ char *json = NULL, *text = NULL, *out = NULL, *error = NULL;
	size_t len;
	int r;

	json = read_fixture(fixtures, "valid", name, ".json", &len);
	r = record_parse(json, len, &p, &error);
	CHECK(r == 0, "valid/%s.json refused: %s", name, error ?: strerror(-r));
	if (r < 0)
		return;

	if (has_text) {
		text = read_fixture(fixtures, "valid", name, ".txt", NULL);
		r = record_render_text(p, &out);
		CHECK(r == 0, "%s: render failed", name);
		if (r == 0)
			check_same_text(name, "render_text", text, out);
		free(TAKE_PTR(out));
	}

	r = record_serialise(p, true, &out);
	CHECK(r == 0, "%s: serialise failed", name);
	if (r == 0 && exact_json) {
		/* the fixtures end with a newline; serde_json output does not */
		CHECK(len > 0 && json[len - 1] == '\n', "%s: fixture lacks final newline", name);
		json[len - 1] = '\0';
		check_same_text(name, "pretty JSON", json, out);
	}
	check_roundtrip(name, p, true);
	check_roundtrip(name, p, false);
}

/* serde_json's compact form: the pretty text without whitespace outside strings. */
static void test_compact(const char *name)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	_cleanup_free_ char *json = NULL, *out = NULL;
	size_t len, n = 0;
	bool in_string = false;

	json = read_fixture(fixtures, "valid", name, ".json", &len);
	for (size_t i = 0; i < len; i++) {
		if (in_string && json[i] == '\\') {
			json[n++] = json[i++];
		} else if (json[i] == '"') {
			in_string = !in_string;
		} else if (!in_string && (json[i] == ' ' || json[i] == '\n')) {
			continue;
		}
		json[n++] = json[i];
	}
	json[n] = '\0';
	if (record_parse(json, n, &p, NULL) < 0 || record_serialise(p, false, &out) < 0) {
		CHECK(false, "%s: compact parse/serialise failed", name);
		return;
	}
	check_same_text(name, "compact JSON", json, out);
}

static void test_invalid(const char *name, const char *path)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	_cleanup_free_ char *json = NULL, *error = NULL;
	size_t len, n = strlen(path);
	int r;

	json = read_fixture(fixtures, "invalid", name, ".json", &len);
	r = record_parse(json, len, &p, &error);
	CHECK(r == -EINVAL, "invalid/%s.json: expected -EINVAL, got %d", name, r);
	CHECK(!p, "invalid/%s.json: record returned on failure", name);
	CHECK(error && strncmp(error, path, n) == 0 && strncmp(error + n, ": ", 2) == 0,
	      "invalid/%s.json: error should name '%s', got '%s'", name, path, error ?: "(null)");
	if (error)
		printf("ok invalid/%s.json: %s\n", name, error);
}

static void test_edge_u64_max(void)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	_cleanup_free_ char *json = NULL, *error = NULL, *out = NULL;
	size_t len;
	int r;

	/* profd's choice: values up to 2^64-1 round-trip exactly */
	json = read_fixture(fixtures, "edge", "edge-u64-max", ".json", &len);
	r = record_parse(json, len, &p, &error);
	CHECK(r == 0, "edge-u64-max refused: %s", error ?: strerror(-r));
	if (r < 0)
		return;
	CHECK(p->wall_time_ns == UINT64_MAX, "edge-u64-max: wall_time_ns is %" PRIu64, p->wall_time_ns);
	r = record_serialise(p, true, &out);
	CHECK(r == 0 && strstr(out, "\"wall_time_ns\": 18446744073709551615,"),
	      "edge-u64-max: u64::MAX not serialised exactly");
	json[len - 1] = '\0';
	if (r == 0)
		check_same_text("edge-u64-max", "pretty JSON", json, out);
	check_roundtrip("edge-u64-max", p, false);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	fixtures = argv[1];

	test_valid("full", true, true);
	test_valid("sparse", true, true);
	test_valid("live", true, true);
	test_valid("valid-extra-fields", true, true);
	test_valid("valid-no-states", true, false);
	test_valid("valid-optional-missing", true, false);

	test_compact("full");
	test_compact("sparse");
	test_compact("valid-extra-fields");

	test_invalid("invalid-cache-state", "identity.cache_state");
	test_invalid("invalid-float-for-integer", "input_bytes");
	test_invalid("invalid-foreign-schema", "schema");
	test_invalid("invalid-missing-resources", "resources");
	test_invalid("invalid-missing-run-id", "identity.run_id");
	test_invalid("invalid-negative", "transitions[1].elapsed_ns");
	test_invalid("invalid-not-object", "document");
	test_invalid("invalid-stages-not-array", "stages");
	test_invalid("invalid-status-case", "status");
	test_invalid("invalid-string-for-integer", "identity.scanner_threads");
	test_invalid("invalid-truncated", "document");
	test_invalid("invalid-u64-overflow", "wall_time_ns");
	test_invalid("invalid-unknown-stage", "stages[0].stage");

	test_edge_u64_max();
	return test_result();
}
