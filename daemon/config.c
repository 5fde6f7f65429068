/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "config.h"

void config_init(Config *c)
{
	*c = (Config){
		.max_hz = 10000,
		.max_duration_usec = 60ULL * 1000000,
		.max_sessions = 8,
		.max_sessions_per_user = 4,
		.max_runs = 4096,
		.max_finished_sessions = 64,
		.max_record_bytes = 4ULL << 20,
		.max_ring_capacity = 4000000,
		.max_export_bytes = 16ULL << 20, /* the system bus refuses messages over 32 MiB */
	};
}

void config_done(Config *c)
{
	free(c->state_dir);
	c->state_dir = NULL;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno != 0 || v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static char *strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int config_set(Config *c, const char *key, const char *value)
{
	static const struct {
		const char *key;
		size_t offset;
		bool is_u32;
		uint64_t min, max, scale;
	} keys[] = {
		{ "MaxHz", offsetof(Config, max_hz), true, 1, 100000, 1 },
		{ "MaxDurationSec", offsetof(Config, max_duration_usec), false, 1, 86400, 1000000 },
		{ "MaxSessions", offsetof(Config, max_sessions), true, 1, 4096, 1 },
		{ "MaxSessionsPerUser", offsetof(Config, max_sessions_per_user), true, 1, 4096, 1 },
		{ "MaxRuns", offsetof(Config, max_runs), true, 1, 1000000, 1 },
		{ "MaxFinishedSessions", offsetof(Config, max_finished_sessions), true, 1, 100000, 1 },
		{ "MaxRecordBytes", offsetof(Config, max_record_bytes), false, 1024, 1ULL << 30, 1 },
		{ "MaxRingCapacity", offsetof(Config, max_ring_capacity), false, 1, 1ULL << 32, 1 },
		{ "MaxExportBytes", offsetof(Config, max_export_bytes), false, 4096, 128ULL << 20, 1 },
	};
	uint64_t v;
	int r;

	if (strcmp(key, "StateDirectory") == 0) {
		char *d;

		if (value[0] != '/')
			return -EINVAL;
		d = strdup(value);
		if (!d)
			return -ENOMEM;
		free(c->state_dir);
		c->state_dir = d;
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		if (strcmp(key, keys[i].key) != 0)
			continue;
		r = parse_u64(value, keys[i].min, keys[i].max, &v);
		if (r < 0)
			return r;
		if (keys[i].is_u32)
			*(uint32_t *)((char *)c + keys[i].offset) = (uint32_t)v;
		else
			*(uint64_t *)((char *)c + keys[i].offset) = v * keys[i].scale;
		return 0;
	}
	return -ENOKEY;
}

int config_load(Config *c, const char *path, bool must_exist, unsigned *ret_line, char **ret_key)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	unsigned line = 0;
	bool in_section = true;

	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT && !must_exist ? 0 : negative_errno();

	while (getline(&buf, &size, f) >= 0) {
		char *s = strip(buf), *eq, *key;
		int r;

		line++;
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			/* only our section counts; others are for future readers */
			in_section = strcmp(s, "[Profiler]") == 0;
			continue;
		}
		if (!in_section)
			continue;
		eq = strchr(s, '=');
		if (eq)
			*eq = '\0';
		key = strip(s);
		r = eq ? config_set(c, key, strip(eq + 1)) : -EINVAL;
		if (r < 0) {
			*ret_line = line;
			*ret_key = strdup(key);
			return r;
		}
	}
	if (ferror(f))
		return -EIO;
	return 0;
}
