/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profctl run SUBVERB: one run record. `render` works offline on a file;
 * show, submit and delete ask the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "cleanup.h"
#include "control-chars.h"
#include "profctl-bus.h"
#include "profctl-run-live.h"
#include "profctl.h"
#include "record.h"

/* Records are small (a few KiB); this only stops a runaway read. */
#define RECORD_FILE_MAX (64u << 20)

static int read_record_file(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, size = 0;
	struct stat st;

	fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return negative_errno();
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	for (;;) {
		ssize_t n;

		if (len == size) {
			int r = array_reserve_max((void **)&buf, &size, len + 1, 1, 16384,
						  RECORD_FILE_MAX);

			if (r < 0)
				return r == -E2BIG ? -EFBIG : r;
		}
		n = read(fd, buf + len, size - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		len += (size_t) n;
	}
	*ret_len = len;
	*ret = TAKE_PTR(buf);
	return 0;
}

static void render_help(FILE *f)
{
	fprintf(f,
		"Usage: profctl run render FILE [--text|--json]\n"
		"\n"
		"Validate a keyhog-profile-v1 record file ('-' for stdin) and print it.\n"
		"\n"
		"  --text        the text report (default)\n"
		"  --json        the normalised record as pretty JSON\n"
		"  -h, --help    show this help\n");
}

static int verb_run_render(const ProfctlContext *ctx, int argc, char **argv)
{
	enum { ARG_TEXT = 0x100, ARG_JSON };
	static const struct option options[] = {
		{ "text", no_argument, NULL, ARG_TEXT },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	_cleanup_(run_profile_freep) RunProfile *profile = NULL;
	_cleanup_free_ char *data = NULL, *error = NULL, *out = NULL;
	int text = -1, json = -1, c, r;
	const char *path;
	size_t len;

	opterr = 0; /* report with our own prefix */
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case ARG_TEXT:
			text = 1;
			break;
		case ARG_JSON:
			json = 1;
			break;
		case 'h':
			render_help(stdout);
			return PROFCTL_EXIT_SUCCESS;
		default:
			fprintf(stderr, "profctl: run render: unknown option '%s'\n", argv[optind - 1]);
			return PROFCTL_EXIT_USAGE;
		}
	if (text == 1 && json == 1) {
		fprintf(stderr, "profctl: --text and --json exclude each other\n");
		return PROFCTL_EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "profctl: run render takes exactly one FILE\n");
		render_help(stderr);
		return PROFCTL_EXIT_USAGE;
	}
	path = argv[optind];
	if (json != 1 && text != 1 && ctx->json)
		json = 1;

	r = read_record_file(path, &data, &len);
	if (r < 0) {
		fprintf(stderr, "profctl: cannot read record '%s': %s\n", path, strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	if (len == 0) {
		fprintf(stderr, "profctl: invalid record '%s': the file is empty\n", path);
		return PROFCTL_EXIT_FAILURE;
	}
	if (memchr(data, '\0', len)) {
		fprintf(stderr, "profctl: invalid record '%s': binary data, not JSON\n", path);
		return PROFCTL_EXIT_FAILURE;
	}
	r = record_parse(data, len, &profile, &error);
	if (r == -EINVAL) {
		fprintf(stderr, "profctl: invalid record '%s': %s\n", path, error);
		return PROFCTL_EXIT_FAILURE;
	}
	if (r >= 0)
		r = json == 1 ? record_serialise(profile, true, &out) : record_render_text(profile, &out);
	if (r < 0) {
		fprintf(stderr, "profctl: cannot render record '%s': %s\n", path, strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	fputs_escaped(out, true, stdout); /* the record's strings are someone else's */
	if (json == 1)
		putchar('\n');
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "profctl: cannot write the record: %m\n");
		return PROFCTL_EXIT_FAILURE;
	}
	return PROFCTL_EXIT_SUCCESS;
}

/* Parse "[--json] [--help] ARG"; returns 1 with *ret_arg set, 0 after help, -EINVAL on misuse. */
static int parse_one_argument(int argc, char **argv, const char *usage, bool *json, const char **ret_arg)
{
	enum { ARG_JSON = 0x100 };
	static const struct option options[] = {
		{ "json", no_argument, NULL, ARG_JSON },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case ARG_JSON:
			if (!json)
				goto usage;
			*json = true;
			break;
		case 'h':
			printf("Usage: profctl %s\n", usage);
			return 0;
		default:
			goto usage;
		}
	if (optind + 1 == argc) {
		*ret_arg = argv[optind];
		return 1;
	}
usage:
	fprintf(stderr, "Usage: profctl %s\n", usage);
	return -EINVAL;
}

static int verb_run_show(const ProfctlContext *ctx, int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(run_profile_freep) RunProfile *profile = NULL;
	_cleanup_free_ char *error = NULL, *out = NULL, *what = NULL, *live = NULL;
	bool json = ctx->json;
	const char *run_id, *data;
	int r;

	r = parse_one_argument(argc, argv, "run show RUN [--json]", &json, &run_id);
	if (r <= 0)
		return r < 0 ? PROFCTL_EXIT_USAGE : PROFCTL_EXIT_SUCCESS;
	if (asprintf(&what, "cannot get run '%s'", run_id) < 0)
		return PROFCTL_EXIT_FAILURE;
	if (profctl_bus_open(ctx, &bus) < 0 || profctl_call_manager(bus, what, "GetRun", &reply, "s", run_id) < 0)
		return PROFCTL_EXIT_FAILURE;
	r = sd_bus_message_read(reply, "s", &data);
	if (r >= 0) {
		r = record_parse(data, strlen(data), &profile, &error);
		if (r == -EINVAL)
			fprintf(stderr, "profctl: profd sent an invalid record for run '%s': %s\n", run_id, error);
	}
	if (r >= 0)
		r = json ? record_serialise(profile, true, &out) : record_render_text(profile, &out);
	if (r >= 0 && !json)
		r = render_live_text(profile, &live);
	if (r < 0) {
		if (r != -EINVAL)
			fprintf(stderr, "profctl: cannot show run '%s': %s\n", run_id, strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	fputs_escaped(out, true, stdout); /* the record's strings are someone else's */
	if (live)
		fputs_escaped(live, true, stdout);
	if (json)
		putchar('\n');
	return PROFCTL_EXIT_SUCCESS;
}

static int verb_run_submit(const ProfctlContext *ctx, int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_free_ char *data = NULL, *what = NULL;
	const char *path, *run_id;
	size_t len;
	int r;

	r = parse_one_argument(argc, argv, "run submit FILE", NULL, &path);
	if (r <= 0)
		return r < 0 ? PROFCTL_EXIT_USAGE : PROFCTL_EXIT_SUCCESS;
	r = read_record_file(path, &data, &len);
	if (r < 0) {
		fprintf(stderr, "profctl: cannot read record '%s': %s\n", path, strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	if (len == 0 || memchr(data, '\0', len)) {
		fprintf(stderr, "profctl: invalid record '%s': %s\n", path,
			len == 0 ? "the file is empty" : "binary data, not JSON");
		return PROFCTL_EXIT_FAILURE;
	}
	data[len] = '\0'; /* read_record_file leaves room: its buffer grows before it is full */
	if (asprintf(&what, "cannot submit run record '%s'", path) < 0)
		return PROFCTL_EXIT_FAILURE;
	if (profctl_bus_open(ctx, &bus) < 0 || profctl_call_manager(bus, what, "SubmitRun", &reply, "s", data) < 0)
		return PROFCTL_EXIT_FAILURE;
	r = sd_bus_message_read(reply, "s", &run_id);
	if (r < 0) {
		fprintf(stderr, "profctl: cannot read profd's answer: %s\n", strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	printf("%s\n", run_id);
	return PROFCTL_EXIT_SUCCESS;
}

static int verb_run_delete(const ProfctlContext *ctx, int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_free_ char *what = NULL;
	const char *run_id;
	int r;

	r = parse_one_argument(argc, argv, "run delete RUN", NULL, &run_id);
	if (r <= 0)
		return r < 0 ? PROFCTL_EXIT_USAGE : PROFCTL_EXIT_SUCCESS;
	if (asprintf(&what, "cannot delete run '%s'", run_id) < 0)
		return PROFCTL_EXIT_FAILURE;
	if (profctl_bus_open(ctx, &bus) < 0 || profctl_call_manager(bus, what, "DeleteRun", NULL, "s", run_id) < 0)
		return PROFCTL_EXIT_FAILURE;
	return PROFCTL_EXIT_SUCCESS;
}

static const ProfctlVerbEntry run_verbs[] = {
	{ "show", verb_run_show, "print a run record the daemon keeps" },
	{ "submit", verb_run_submit, "hand a record file to the daemon to keep" },
	{ "delete", verb_run_delete, "delete a run record" },
	{ "render", verb_run_render, "validate a record file and print it (offline)" },
};

static void run_help(FILE *f)
{
	fprintf(f, "Usage: profctl run SUBVERB [ARGS...]\n\nOne run record.\n\nSub-verbs:\n");
	profctl_list_verbs(f, run_verbs, ELEMENTSOF(run_verbs), 10);
	fprintf(f, "\nRun 'profctl run SUBVERB --help' for its options.\n");
}

int verb_run(const ProfctlContext *ctx, int argc, char **argv)
{
	int r;

	if (argc < 2) {
		run_help(stderr);
		return PROFCTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		run_help(stdout);
		return PROFCTL_EXIT_SUCCESS;
	}
	r = profctl_run_verb(ctx, run_verbs, ELEMENTSOF(run_verbs), argc - 1, argv + 1);
	if (r != -ENOENT)
		return r;
	fprintf(stderr, "profctl: unknown run sub-verb '%s'; see 'profctl run --help'\n", argv[1]);
	return PROFCTL_EXIT_USAGE;
}
