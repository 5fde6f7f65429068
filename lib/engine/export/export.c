/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "export.h"

#include <errno.h>
#include <string.h>

#include "cleanup.h"
#include "io-util.h"
#include "export-writers.h"
#include "fold.h"

static const char *const format_names[_EXPORT_FORMAT_MAX] = {
	[EXPORT_FOLDED] = "folded",	[EXPORT_PPROF] = "pprof", [EXPORT_FIREFOX] = "firefox",
	[EXPORT_SPEEDSCOPE] = "speedscope", [EXPORT_SVG] = "svg",     [EXPORT_METRICS] = "metrics",
	[EXPORT_RECORD] = "record",
};

int export_format_from_string(const char *s, ExportFormat *ret)
{
	if (!s)
		return -EINVAL;
	for (int f = 0; f < _EXPORT_FORMAT_MAX; f++)
		if (strcmp(s, format_names[f]) == 0) {
			*ret = f;
			return 0;
		}
	return -EINVAL;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls > lx && strcmp(s + ls - lx, suffix) == 0;
}

int export_format_from_filename(const char *path, ExportFormat *ret)
{
	/* Longest suffix first: ".speedscope.json" must win over ".json". */
	static const struct {
		const char *suffix;
		ExportFormat format;
	} suffixes[] = {
		{ ".speedscope.json", EXPORT_SPEEDSCOPE },
		{ ".pb.gz", EXPORT_PPROF },
		{ ".folded", EXPORT_FOLDED },
		{ ".svg", EXPORT_SVG },
		{ ".json", EXPORT_FIREFOX },
	};

	if (!path)
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
		if (has_suffix(path, suffixes[i].suffix)) {
			*ret = suffixes[i].format;
			return 0;
		}
	return -EINVAL;
}

const char *export_format_to_string(ExportFormat format)
{
	if ((int)format < 0 || format >= _EXPORT_FORMAT_MAX)
		return NULL;
	return format_names[format];
}

bool export_format_is_profile(ExportFormat format)
{
	return (int)format >= 0 && format < EXPORT_METRICS;
}

static int check_profile_format(ExportFormat format)
{
	if (export_format_is_profile(format))
		return 0;
	return format == EXPORT_METRICS || format == EXPORT_RECORD ? -EOPNOTSUPP : -EINVAL;
}

int export_folding(const Folding *folding, ExportFormat format, FILE *out)
{
	static int (*const writers[])(const Folding *, FILE *) = {
		[EXPORT_FOLDED] = export_write_folded,
		[EXPORT_PPROF] = export_write_pprof,
		[EXPORT_FIREFOX] = export_write_firefox,
		[EXPORT_SPEEDSCOPE] = export_write_speedscope,
		[EXPORT_SVG] = export_write_svg,
	};
	int r;

	r = check_profile_format(format);
	if (r < 0)
		return r;
	r = writers[format](folding, out);
	if (r < 0)
		return r;
	if (fflush(out) != 0 || ferror(out))
		return negative_errno();
	return 0;
}

int export_profile(const Profile *p, ExportFormat format, FILE *out)
{
	_cleanup_(folding_freep) Folding *folding = NULL;
	int r;

	/* refuse before folding, which is the expensive part */
	r = check_profile_format(format);
	if (r < 0)
		return r;
	r = fold_profile(p, &folding);
	if (r < 0)
		return r;
	return export_folding(folding, format, out);
}

int export_profile_to_fd(const Profile *p, ExportFormat format, int fd)
{
	_cleanup_fclose_ FILE *f = NULL;
	int r;

	r = fdopen_dup(fd, "w", &f);
	if (r < 0)
		return r;
	r = export_profile(p, format, f);
	if (r < 0)
		return r;
	if (fflush(f) != 0)
		return negative_errno();
	return 0;
}

int export_profile_to_memory(const Profile *p, ExportFormat format, char **ret_data,
			     size_t *ret_size)
{
	_cleanup_free_ char *data = NULL;
	size_t size = 0;
	FILE *f;
	int r;

	f = open_memstream(&data, &size);
	if (!f)
		return -ENOMEM;
	r = export_profile(p, format, f);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0)
		return r;
	*ret_data = TAKE_PTR(data);
	*ret_size = size;
	return 0;
}
