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
	uint32_t max_sessions_per_user; /* concurrent sampling sessions of one uid but root */
	uint32_t max_runs;              /* stored run records, all users */
	uint32_t max_runs_per_user;     /* stored run records of one uid but root */
	uint64_t max_run_bytes;         /* bytes of stored run records, all users */
	uint64_t max_run_bytes_per_user;   /* bytes of stored run records of one uid but root */
	uint64_t run_cache_bytes;       /* stored records' JSON kept in memory for GetRun */
	uint32_t max_finished_sessions;    /* kept finished sessions, all users */
	uint32_t max_finished_sessions_per_user; /* kept finished sessions of one uid but root */
	uint64_t max_record_bytes;      /* largest record SubmitRun takes (as stored) */
	uint64_t max_sample_budget;     /* most samples one session keeps */
	uint64_t max_export_bytes;      /* largest Export() reply; ExportToFd has no limit */
	uint64_t max_list_bytes;        /* largest ListRuns/ListRunsRange reply */
	uint32_t max_fds_per_session;   /* perf events (threads x CPUs) one session may open */
	uint32_t max_fds_per_user;      /* fds the sessions and exports of one uid but root hold */
	uint32_t max_requests;          /* SubmitRun/GetRun/Export/ExportToFd in progress, all users */
	uint32_t max_requests_per_user; /* the same for one uid but root */
	uint64_t max_backlog_bytes;     /* records a session holds for its unwinder; 0 = the engine's default */
	uint64_t symbol_cache_max_bytes; /* names and unwind tables of modules no session maps */
	uint64_t symbol_cache_disk_max_bytes; /* the same kept in the state directory */
	uint64_t max_run_duration_usec; /* ceiling for a live run (BeginRun) */
	uint32_t default_run_hz;        /* a live run's rate when it asks for none */
	uint64_t max_run_spans;         /* stage spans one live run keeps */
	uint64_t unwinder_timeout_usec; /* an unwinder with work that says nothing this long is killed */
	uint64_t unwinder_memory_bytes; /* address space of each unwinder (RLIMIT_AS) */
	uint64_t unwinder_idle_usec;    /* an unwinder without sessions this long exits */
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
