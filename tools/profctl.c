/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* profctl: the command-line client of profd. Global options, then a verb. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "json-number.h"
#include "profctl.h"
#include "table.h"

static const ProfctlVerbEntry verbs[] = {
	{ "record", verb_record, "sample a process and write its profile" },
	{ "sessions", verb_sessions, "list sessions" },
	{ "status", verb_status, "show a session's state and counters" },
	{ "stop", verb_stop, "stop a session early" },
	{ "export", verb_export, "write a session's profile in a format" },
	{ "runs", verb_runs, "list run records" },
	{ "run", verb_run, "one run record: render a record file" },
};

int profctl_no_arguments(int argc, char **argv, const char *description)
{
	if (argc <= 1)
		return 1;
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf("Usage: profctl %s\n\n%s\n", argv[0], description);
		return 0;
	}
	fprintf(stderr, "Usage: profctl %s\n", argv[0]);
	return -EINVAL;
}

void profctl_list_verbs(FILE *f, const ProfctlVerbEntry *table, size_t n, int width)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-*s  %s\n", width, table[i].name, table[i].summary);
}

int profctl_run_verb(const ProfctlContext *ctx, const ProfctlVerbEntry *table, size_t n, int argc,
		     char **argv)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(argv[0], table[i].name) == 0) {
			optind = 0; /* the verb parses its own options */
			return table[i].run(ctx, argc, argv);
		}
	return -ENOENT;
}

int profctl_print_json(const json_t *v)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = json_write(v, true, &text);
	if (r < 0)
		return r;
	puts(text);
	return 0;
}

int profctl_print_list(const ProfctlContext *ctx, json_t *array, const Table *table, const char *empty)
{
	if (ctx->json)
		return profctl_print_json(array);
	if (table_rows(table) == 0)
		printf("%s\n", empty);
	else
		table_print(table, stdout);
	return 0;
}

static void help(FILE *f)
{
	fprintf(f,
		"Usage: profctl [--system|--user|--address=ADDR|--local] [--json] VERB [ARGS...]\n"
		"\n"
		"Drive the profd profiler daemon.\n"
		"\n"
		"Options:\n"
		"  --system          talk to profd on the system bus (default)\n"
		"  --user            talk to profd on the user's session bus\n"
		"  --address=ADDR    talk to profd on the bus at ADDR\n"
		"  --local           run the profiling engine in-process, no daemon\n"
		"  --json            machine-readable output\n"
		"  -h, --help        show this help\n"
		"      --version     show the version\n"
		"\n"
		"Verbs:\n");
	profctl_list_verbs(f, verbs, ELEMENTSOF(verbs), 16);
	fprintf(f, "\nRun 'profctl VERB --help' for a verb's options.\n");
}

int main(int argc, char **argv)
{
	enum { ARG_SYSTEM = 0x100, ARG_USER, ARG_ADDRESS, ARG_LOCAL, ARG_JSON, ARG_VERSION };
	static const struct option options[] = {
		{ "system", no_argument, NULL, ARG_SYSTEM },
		{ "user", no_argument, NULL, ARG_USER },
		{ "address", required_argument, NULL, ARG_ADDRESS },
		{ "local", no_argument, NULL, ARG_LOCAL },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	ProfctlContext ctx = { .transport = PROFCTL_SYSTEM_BUS };
	int c, r;

	/* '+' stops at the verb, so verbs own every option after it */
	while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
		switch (c) {
		case ARG_SYSTEM:
			ctx.transport = PROFCTL_SYSTEM_BUS;
			break;
		case ARG_USER:
			ctx.transport = PROFCTL_USER_BUS;
			break;
		case ARG_ADDRESS:
			ctx.transport = PROFCTL_ADDRESS;
			ctx.address = optarg;
			break;
		case ARG_LOCAL:
			ctx.transport = PROFCTL_LOCAL;
			break;
		case ARG_JSON:
			ctx.json = true;
			break;
		case 'h':
			help(stdout);
			return PROFCTL_EXIT_SUCCESS;
		case ARG_VERSION:
			printf("profctl %s\n", PROFD_VERSION);
			return PROFCTL_EXIT_SUCCESS;
		default:
			return PROFCTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		help(stderr);
		return PROFCTL_EXIT_USAGE;
	}
	r = profctl_run_verb(&ctx, verbs, ELEMENTSOF(verbs), argc - optind, argv + optind);
	if (r != -ENOENT)
		return r;
	fprintf(stderr, "profctl: unknown verb '%s'; see 'profctl --help'\n", argv[optind]);
	return PROFCTL_EXIT_USAGE;
}
