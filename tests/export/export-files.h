/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "export.h"

/*
 * Write 'p' into 'dir' in every format, one file each (profile.folded,
 * profile.pb.gz, profile.json, profile.speedscope.json, profile.svg), for the
 * tests that load them into third-party readers. Returns the exit status:
 * 0, or 1 after saying on stderr, as 'tool', what failed (a failed export
 * does not stop the others).
 */
static inline int export_files(const Profile *p, const char *dir, const char *tool)
{
	static const char *const names[] = {
		"profile.folded", "profile.pb.gz", "profile.json", "profile.speedscope.json",
		"profile.svg",
	};
	int status = 0;

	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		_cleanup_free_ char *path = NULL;
		_cleanup_fclose_ FILE *f = NULL;
		ExportFormat format;
		int r;

		if (asprintf(&path, "%s/%s", dir, names[i]) < 0)
			return 1;
		r = export_format_from_filename(path, &format);
		if (r < 0) {
			fprintf(stderr, "%s: no format for '%s'\n", tool, path);
			return 1;
		}
		f = fopen(path, "we");
		if (!f) {
			fprintf(stderr, "%s: cannot create '%s': %m\n", tool, path);
			return 1;
		}
		r = export_profile(p, format, f);
		if (r < 0) {
			fprintf(stderr, "%s: cannot export '%s' as %s: %s\n", tool, path,
				export_format_to_string(format), strerror(-r));
			status = 1;
		}
	}
	return status;
}
