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
#include "parse-number.h"
#include "symbol-cache.h"

void config_init(Config *c)
{
	*c = (Config){
		.max_hz = 10000,
		.max_duration_usec = 60ULL * 1000000,
		.max_sessions = 16,
		.max_sessions_per_user = 4,
		.max_runs = 4096,
		.max_runs_per_user = 512,
		.max_run_bytes = 1ULL << 30,
		.max_run_bytes_per_user = 128ULL << 20,
		.run_cache_bytes = 4ULL << 20,
		.max_finished_sessions = 64,
		.max_finished_sessions_per_user = 16,
		.max_record_bytes = 4ULL << 20,
		.max_sample_budget = 4000000,
		.max_export_bytes = 16ULL << 20, /* the system bus refuses messages over 32 MiB */
		.max_list_bytes = 1ULL << 20,
		.max_fds_per_session = 8192,
		.max_fds_per_user = 16384,
		.max_requests = 64,
		.max_requests_per_user = 8,
		.symbol_cache_max_bytes = SYMBOL_CACHE_DEFAULT_MAX_BYTES,
		.symbol_cache_disk_max_bytes = 1ULL << 30,
		.max_run_duration_usec = 3600ULL * 1000000,
		.default_run_hz = 49,
		.max_run_spans = 1000000,
		.unwinder_timeout_usec = 30ULL * 1000000,
		.unwinder_memory_bytes = 4ULL << 30,
		.unwinder_idle_usec = 10ULL * 1000000,
	};
}

void config_done(Config *c)
{
	free(c->state_dir);
	c->state_dir = NULL;
}

static int parse_u64_in(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	int r = parse_u64(s, &v);

	if (r < 0)
		return r;
	if (v < min || v > max)
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
		{ "MaxRunsPerUser", offsetof(Config, max_runs_per_user), true, 1, 1000000, 1 },
		{ "MaxRunBytes", offsetof(Config, max_run_bytes), false, 4096, 1ULL << 40, 1 },
		{ "MaxRunBytesPerUser", offsetof(Config, max_run_bytes_per_user), false, 4096, 1ULL << 40, 1 },
		{ "RunCacheBytes", offsetof(Config, run_cache_bytes), false, 0, 1ULL << 40, 1 },
		{ "MaxFinishedSessions", offsetof(Config, max_finished_sessions), true, 1, 100000, 1 },
		{ "MaxFinishedSessionsPerUser", offsetof(Config, max_finished_sessions_per_user), true, 1,
		  100000, 1 },
		{ "MaxRecordBytes", offsetof(Config, max_record_bytes), false, 1024, 1ULL << 30, 1 },
		{ "MaxRingCapacity", offsetof(Config, max_sample_budget), false, 1, 1ULL << 32, 1 },
		{ "MaxExportBytes", offsetof(Config, max_export_bytes), false, 4096, 128ULL << 20, 1 },
		{ "MaxListBytes", offsetof(Config, max_list_bytes), false, 4096, 128ULL << 20, 1 },
		{ "MaxFdsPerSession", offsetof(Config, max_fds_per_session), true, 16, 1U << 24, 1 },
		{ "MaxFdsPerUser", offsetof(Config, max_fds_per_user), true, 16, 1U << 24, 1 },
		{ "MaxRequests", offsetof(Config, max_requests), true, 1, 65536, 1 },
		{ "MaxRequestsPerUser", offsetof(Config, max_requests_per_user), true, 1, 65536, 1 },
		{ "MaxBacklogBytes", offsetof(Config, max_backlog_bytes), false, 1ULL << 20, 1ULL << 32, 1 },
		{ "SymbolCacheMaxBytes", offsetof(Config, symbol_cache_max_bytes), false, 1ULL << 20,
		  1ULL << 40, 1 },
		{ "SymbolCacheDiskMaxBytes", offsetof(Config, symbol_cache_disk_max_bytes), false,
		  1ULL << 20, 1ULL << 40, 1 },
		{ "MaxRunDurationSec", offsetof(Config, max_run_duration_usec), false, 1, 7 * 86400, 1000000 },
		{ "DefaultRunHz", offsetof(Config, default_run_hz), true, 1, 100000, 1 },
		{ "MaxRunSpans", offsetof(Config, max_run_spans), false, 1, 1ULL << 32, 1 },
		{ "UnwinderTimeoutSec", offsetof(Config, unwinder_timeout_usec), false, 1, 3600, 1000000 },
		{ "UnwinderMemoryMax", offsetof(Config, unwinder_memory_bytes), false, 64ULL << 20, 1ULL << 40, 1 },
		{ "UnwinderIdleSec", offsetof(Config, unwinder_idle_usec), false, 0, 3600, 1000000 },
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
		r = parse_u64_in(value, keys[i].min, keys[i].max, &v);
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
