/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit statuses, as DESIGN.md §7 promises. */
enum {
	PROFCTL_EXIT_SUCCESS = 0,
	PROFCTL_EXIT_FAILURE = 1,
	PROFCTL_EXIT_USAGE = 2,
};

typedef enum ProfctlTransport {
	PROFCTL_SYSTEM_BUS,
	PROFCTL_USER_BUS,
	PROFCTL_ADDRESS,
	PROFCTL_LOCAL,
} ProfctlTransport;

typedef struct ProfctlContext {
	ProfctlTransport transport;
	const char *address; /* with PROFCTL_ADDRESS */
	bool json;
} ProfctlContext;

/*
 * A verb gets argv with argv[0] set to its own name; it parses its options
 * with getopt_long and returns one of the exit statuses above.
 */
typedef int (*ProfctlVerb)(const ProfctlContext *ctx, int argc, char **argv);

/* A verb (or sub-verb) in a table: its name, its function and its line in --help. */
typedef struct ProfctlVerbEntry {
	const char *name;
	ProfctlVerb run;
	const char *summary;
} ProfctlVerbEntry;

/* Each verb of 'table': its name (in a column 'width' wide) and summary, a line each. */
void profctl_list_verbs(FILE *f, const ProfctlVerbEntry *table, size_t n, int width);
/* Run the verb of 'table' named argv[0] (getopt reset): its exit status; -ENOENT: none. */
int profctl_run_verb(const ProfctlContext *ctx, const ProfctlVerbEntry *table, size_t n, int argc,
		     char **argv);

typedef struct Table Table;
typedef struct json_t json_t;

/* For verbs without arguments: 1 to go on, 0 after --help, -EINVAL (usage printed) otherwise. */
int profctl_no_arguments(int argc, char **argv, const char *description);
/* JSON as the record library writes it, every u64 exact (json_u64_new()), with a newline. */
int profctl_print_json(const json_t *v);
/* A list verb's output: the JSON array with --json, else the table, or 'empty' without rows. */
int profctl_print_list(const ProfctlContext *ctx, json_t *array, const Table *table, const char *empty);

/* verbs, one declaration per verb group file */
int verb_record(const ProfctlContext *ctx, int argc, char **argv);
int verb_sessions(const ProfctlContext *ctx, int argc, char **argv);
int verb_status(const ProfctlContext *ctx, int argc, char **argv);
int verb_stop(const ProfctlContext *ctx, int argc, char **argv);
int verb_export(const ProfctlContext *ctx, int argc, char **argv);
int verb_runs(const ProfctlContext *ctx, int argc, char **argv);
int verb_run(const ProfctlContext *ctx, int argc, char **argv);
