/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the keyhog-profile-v1 parser: any input either is
 * refused with an error message, or parses into a record that serialises
 * (pretty and compact), re-parses to an equal record, serialises identically
 * again, and renders as text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "record.h"

static void check_roundtrip(const RunProfile *p, bool pretty)
{
	_cleanup_(run_profile_freep) RunProfile *again = NULL;
	_cleanup_free_ char *json = NULL, *json_again = NULL, *error = NULL;

	if (record_serialise(p, pretty, &json) < 0)
		abort();
	if (record_parse(json, strlen(json), &again, &error) < 0) {
		fprintf(stderr, "own output refused: %s\n%s\n", error, json);
		abort();
	}
	if (!run_profile_equal(p, again)) {
		fprintf(stderr, "round-trip changed the record:\n%s\n", json);
		abort();
	}
	if (record_serialise(again, pretty, &json_again) < 0 || strcmp(json, json_again) != 0) {
		fprintf(stderr, "serialisation not stable:\n%s\n---\n%s\n", json, json_again);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_(run_profile_freep) RunProfile *p = NULL;
	_cleanup_free_ char *error = NULL, *text = NULL;
	int r;

	r = record_parse((const char *) data, size, &p, &error);
	if (r < 0) {
		if (!error || !strchr(error, ':'))
			abort(); /* every refusal names a path and a reason */
		return 0;
	}
	check_roundtrip(p, true);
	check_roundtrip(p, false);
	if (record_render_text(p, &text) < 0 || strncmp(text, "KeyHog profile ", 15) != 0)
		abort();
	return 0;
}
