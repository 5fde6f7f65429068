/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What profd added to the record of a live run (record --stages), as text
 * after the record's own: per stage and per macro state the share of the
 * samples and the hottest functions, and how the run went as profd saw it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cleanup.h"
#include "profctl-run-live.h"

/* "name 98.0%, name 1.5%" of a group's "hottest" list. */
static void hottest(FILE *f, json_t *group)
{
	json_t *list = json_object_get(group, "hottest"), *h;
	size_t i;

	json_array_foreach(list, i, h) {
		const char *fn = json_string_value(json_object_get(h, "function"));

		fprintf(f, "%s%s %.1f%%", i ? ", " : " hottest: ", fn ?: "[unknown]",
			json_number_value(json_object_get(h, "share")) * 100.0);
	}
}

static void group(FILE *f, const char *kind, const char *name, json_t *g)
{
	if (!json_is_object(g))
		return;
	fprintf(f, "  %-5s %-24s cpu_share=%5.1f%% samples=%" JSON_INTEGER_FORMAT, kind, name,
		json_number_value(json_object_get(g, "cpu_share")) * 100.0,
		json_integer_value(json_object_get(g, "samples")));
	hottest(f, g);
	fputc('\n', f);
}

static json_int_t count(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

int render_live_text(const RunProfile *p, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	json_t *profd = p->extra ? json_object_get(p->extra, "profd") : NULL, *spans, *s;
	size_t size = 0, i;
	FILE *f;

	if (!json_is_object(profd)) {
		*ret = NULL;
		return 0;
	}
	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	spans = json_object_get(profd, "spans");
	fprintf(f,
		"sampled by profd: session %s, ended %s, %" JSON_INTEGER_FORMAT " samples at %" JSON_INTEGER_FORMAT
		" Hz (%" JSON_INTEGER_FORMAT " in no stage); spans kept=%" JSON_INTEGER_FORMAT
		" lost=%" JSON_INTEGER_FORMAT " invalid=%" JSON_INTEGER_FORMAT " over_limit=%" JSON_INTEGER_FORMAT "\n",
		json_string_value(json_object_get(profd, "session")) ?: "?",
		json_string_value(json_object_get(profd, "end_reason")) ?: "?", count(profd, "samples"),
		count(profd, "hz"), count(json_object_get(profd, "unstaged"), "samples"),
		count(spans, "kept"), count(spans, "lost"), count(spans, "invalid"), count(spans, "over_limit"));
	for (size_t k = 0; k < p->n_stages; k++)
		group(f, "stage", stage_to_string(p->stages[k].stage),
		      p->stages[k].extra ? json_object_get(p->stages[k].extra, "profd") : NULL);
	json_array_foreach(json_object_get(profd, "unrecorded_stages"), i, s)
		group(f, "stage", json_string_value(json_object_get(s, "stage")) ?: "?", s);
	json_array_foreach(json_object_get(profd, "states"), i, s)
		group(f, "state", json_string_value(json_object_get(s, "state")) ?: "?", s);
	if (ferror(f) | fclose(f))
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	return 0;
}
