/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * export-sample KIND DIR: write a synthetic profile in every format into DIR
 * (profile.folded, profile.pb.gz, profile.json, profile.speedscope.json,
 * profile.svg), for the tests that load them into third-party readers.
 * KIND is mixed, hostile, random or processes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "export.h"
#include "synthetic-profile.h"

int main(int argc, char **argv)
{
	static const char *const names[] = {
		"profile.folded", "profile.pb.gz", "profile.json", "profile.speedscope.json",
		"profile.svg",
	};
	_cleanup_profile_ Profile *p = NULL;
	SyntheticKind kind;
	int r, status = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: export-sample mixed|hostile|random|processes DIR\n");
		return 2;
	}
	if (strcmp(argv[1], "mixed") == 0)
		kind = SYNTHETIC_MIXED;
	else if (strcmp(argv[1], "hostile") == 0)
		kind = SYNTHETIC_HOSTILE;
	else if (strcmp(argv[1], "random") == 0)
		kind = SYNTHETIC_RANDOM;
	else if (strcmp(argv[1], "processes") == 0)
		kind = SYNTHETIC_PROCESSES;
	else {
		fprintf(stderr, "export-sample: unknown profile kind '%s'\n", argv[1]);
		return 2;
	}
	r = synthetic_profile(kind, 20000, 2000, 7, &p);
	if (r < 0) {
		fprintf(stderr, "export-sample: cannot build profile: %s\n", strerror(-r));
		return 1;
	}
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		_cleanup_free_ char *path = NULL;
		_cleanup_fclose_ FILE *f = NULL;
		ExportFormat format;

		if (asprintf(&path, "%s/%s", argv[2], names[i]) < 0)
			return 1;
		r = export_format_from_filename(path, &format);
		if (r < 0) {
			fprintf(stderr, "export-sample: no format for '%s'\n", path);
			return 1;
		}
		f = fopen(path, "we");
		if (!f) {
			fprintf(stderr, "export-sample: cannot create '%s': %m\n", path);
			return 1;
		}
		r = export_profile(p, format, f);
		if (r < 0) {
			fprintf(stderr, "export-sample: cannot export '%s' as %s: %s\n", path,
				export_format_to_string(format), strerror(-r));
			status = 1;
		}
	}
	return status;
}
