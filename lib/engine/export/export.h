/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Exports of a Profile. Every format is written from one folding (fold.h), so
 * the exports of one session never disagree about what was hot.
 *
 * EXPORT_METRICS and EXPORT_RECORD are session-level documents produced by
 * the sampling session and the record library; they are named here so callers
 * parse one format list, but export_profile() refuses them with -EOPNOTSUPP.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile.h"

typedef enum ExportFormat {
	EXPORT_FOLDED,
	EXPORT_PPROF,
	EXPORT_FIREFOX,
	EXPORT_SPEEDSCOPE,
	EXPORT_SVG,
	EXPORT_METRICS,
	EXPORT_RECORD,
	_EXPORT_FORMAT_MAX,
} ExportFormat;

/* "folded", "pprof", "firefox", "speedscope", "svg", "metrics", "record"; -EINVAL otherwise. */
int export_format_from_string(const char *s, ExportFormat *ret);
/*
 * By file name suffix (DESIGN §7): ".svg", ".pb.gz", ".folded",
 * ".speedscope.json", ".json" (firefox). -EINVAL when the name says nothing.
 */
int export_format_from_filename(const char *path, ExportFormat *ret);
/* NULL for values out of range. */
const char *export_format_to_string(ExportFormat format);
/* True for the formats export_profile() writes (all but metrics and record). */
bool export_format_is_profile(ExportFormat format);

/*
 * Write 'p' in 'format'. Returns 0, -EOPNOTSUPP for metrics/record, -EINVAL
 * for an unknown format, -ENOMEM, or the negative errno of a failed write.
 * Output is deterministic: the same profile gives the same bytes.
 */
int export_profile(const Profile *p, ExportFormat format, FILE *out);
/*
 * The same from a folding made once with fold_profile() (fold.h), for callers
 * that write several formats of one profile.
 */
typedef struct Folding Folding;
int export_folding(const Folding *folding, ExportFormat format, FILE *out);
/* The same to a file descriptor, which stays open and owned by the caller. */
int export_profile_to_fd(const Profile *p, ExportFormat format, int fd);
/* The same into a malloc'ed buffer; *ret_data is NUL-terminated (not counted in *ret_size). */
int export_profile_to_memory(const Profile *p, ExportFormat format, char **ret_data,
			     size_t *ret_size);
