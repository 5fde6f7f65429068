/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit test of the config parser: values, sections, and each kind of refusal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "test-util.h"

static char path[] = "/tmp/profd-test-config.XXXXXX";

static int load_text(const char *text, Config *c, unsigned *line, char **key)
{
	FILE *f = fopen(path, "we");

	fputs(text, f);
	fclose(f);
	config_init(c);
	return config_load(c, path, true, line, key);
}

/* One-line configs and how each is refused. */
static const struct {
	const char *text;
	int error, or_error; /* the refusal expected, or either of two; 0: any */
	unsigned line;       /* the line blamed; 0: not checked */
} refusals[] = {
	{ "SymbolCacheMaxBytes=1000\n", -ERANGE, 0, 0 }, /* below 1 MiB */
	{ "MaxSessions=0\n", -ERANGE, 0, 1 },
	{ "MaxHz=12x\n", -EINVAL, 0, 0 },
	{ "MaxHz=-1\n", -EINVAL, -ERANGE, 0 },
	{ "just words\n", -EINVAL, 0, 1 }, /* a line without '=' */
	{ "StateDirectory=relative/dir\n", 0, 0, 0 },
};

int main(void)
{
	Config c;
	unsigned line = 0;
	char *key = NULL;
	int fd, r;

	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);

	r = load_text("# comment\n; comment\n\n[Profiler]\n MaxHz = 500 \nMaxDurationSec=5\n"
		      "MaxSessions=3\nMaxSessionsPerUser=1\nMaxRuns=10\nMaxFinishedSessions=2\n"
		      "MaxRecordBytes=2048\nMaxRingCapacity=77\nMaxExportBytes=8192\n"
		      "MaxRunsPerUser=4\nMaxRunBytes=100000\nMaxRunBytesPerUser=50000\n"
		      "MaxFinishedSessionsPerUser=1\nMaxListBytes=65536\nMaxFdsPerSession=300\n"
		      "MaxFdsPerUser=600\nMaxRequests=9\nMaxRequestsPerUser=3\n"
		      "SymbolCacheMaxBytes=4194304\nRunCacheBytes=0\n"
		      "StateDirectory=/srv/profd\n[Other]\nMaxHz=1\nWhatever=x\n",
		      &c, &line, &key);
	CHECK(r == 0, "a good config was refused: %d line %u key %s", r, line, key);
	CHECK(c.max_hz == 500, "MaxHz %u", c.max_hz);
	CHECK(c.max_duration_usec == 5000000, "MaxDurationSec gave %llu usec",
	      (unsigned long long)c.max_duration_usec);
	CHECK(c.max_sessions == 3 && c.max_sessions_per_user == 1, "session limits %u %u",
	      c.max_sessions, c.max_sessions_per_user);
	CHECK(c.max_runs == 10 && c.max_finished_sessions == 2, "run/session caps");
	CHECK(c.max_record_bytes == 2048 && c.max_sample_budget == 77 && c.max_export_bytes == 8192,
	      "byte limits");
	CHECK(c.max_runs_per_user == 4 && c.max_run_bytes == 100000 &&
		      c.max_run_bytes_per_user == 50000 && c.max_finished_sessions_per_user == 1,
	      "per-user run and session quotas");
	CHECK(c.max_list_bytes == 65536 && c.max_fds_per_session == 300 && c.max_fds_per_user == 600 &&
		      c.max_requests == 9 && c.max_requests_per_user == 3,
	      "reply, fd and request limits");
	CHECK(c.symbol_cache_max_bytes == 4194304, "SymbolCacheMaxBytes %llu",
	      (unsigned long long)c.symbol_cache_max_bytes);
	CHECK(c.run_cache_bytes == 0, "RunCacheBytes=0 (keep no records) gave %llu",
	      (unsigned long long)c.run_cache_bytes);
	CHECK(c.state_dir && strcmp(c.state_dir, "/srv/profd") == 0, "StateDirectory %s",
	      c.state_dir ?: "(null)");
	config_done(&c);

	r = load_text("MaxHz=100\nMaxHertz=5\n", &c, &line, &key);
	CHECK(r == -ENOKEY && line == 2 && key && strcmp(key, "MaxHertz") == 0,
	      "unknown key: r=%d line=%u key=%s", r, line, key ?: "(null)");
	CHECK(c.max_hz == 100, "keys before the bad line are applied");
	free(key);
	key = NULL;
	config_done(&c);

	for (size_t i = 0; i < ELEMENTSOF(refusals); i++) {
		r = load_text(refusals[i].text, &c, &line, &key);
		CHECK(r < 0 && (refusals[i].error == 0 || r == refusals[i].error ||
				r == refusals[i].or_error) &&
			      (refusals[i].line == 0 || line == refusals[i].line),
		      "refusal %zu was not as expected: r=%d line=%u", i, r, line);
		free(key);
		key = NULL;
		config_done(&c);
	}

	unlink(path);
	config_init(&c);
	r = config_load(&c, path, false, &line, &key);
	CHECK(r == 0 && c.max_hz == 10000, "a missing optional file: r=%d", r);
	r = config_load(&c, path, true, &line, &key);
	CHECK(r == -ENOENT, "a missing required file: r=%d", r);
	config_done(&c);

	if (test_failures == 0)
		printf("ok - config parser\n");
	return test_result();
}
