/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The operator's limits, from /etc/profd/profd.conf (or --config PATH).
 * The file is "Key=Value" lines, optionally under a "[Profiler]" section;
 * '#' and ';' start comments. profd.conf beside this file documents each key.
 */

#include <stdbool.h>
#include <stdint.h>

/* PROFD_CONFIG_PATH comes from the build: <sysconfdir>/profd/profd.conf, /etc with prefix /usr */
#define CONFIG_DEFAULT_PATH PROFD_CONFIG_PATH
#define CONFIG_DEFAULT_STATE_DIR "/var/lib/profd"

typedef struct Config {
	uint32_t max_hz;                /* ceiling for hz; the kernel's limit applies too */
	uint64_t max_duration_usec;     /* ceiling for a session's duration */
	uint32_t max_sessions;          /* concurrent sampling sessions, all users */
	uint32_t max_sessions_per_user; /* concurrent sampling sessions of one uid */
	uint32_t max_runs;              /* stored run records; the oldest is evicted */
	uint32_t max_finished_sessions; /* kept finished sessions; the oldest is released */
	uint64_t max_record_bytes;      /* largest record SubmitRun takes */
	uint64_t max_ring_capacity;     /* most samples one session keeps */
	uint64_t max_export_bytes;      /* largest Export() reply; ExportToFd has no limit */
	char *state_dir;                /* NULL: $STATE_DIRECTORY, else CONFIG_DEFAULT_STATE_DIR */
} Config;

void config_init(Config *c);
void config_done(Config *c);

/*
 * Read 'path' into 'c'. A missing file is fine when !must_exist. On a bad
 * line sets *ret_line (1-based) and *ret_key (caller frees) and returns
 * -ENOKEY (unknown key), -ERANGE (value out of range) or -EINVAL (malformed).
 */
int config_load(Config *c, const char *path, bool must_exist, unsigned *ret_line, char **ret_key);
