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

#include "export-files.h"
#include "synthetic-profile.h"

int main(int argc, char **argv)
{
	_cleanup_profile_ Profile *p = NULL;
	SyntheticKind kind;
	int r;

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
	return export_files(p, argv[2], "export-sample");
}
