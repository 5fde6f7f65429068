/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* profctl sessions | status ID | stop ID | export ID -f FORMAT [-o FILE] */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "control-chars.h"
#include "json-number.h"
#include "profctl-bus.h"
#include "profctl.h"
#include "table.h"


/* Parse "VERB [--help] ARG" for verbs that take one session id and no options. */
/*
 * A session and its exports are gone once released, and `profctl record`
 * releases its own as it ends (DESIGN.md, Release): say so, and where the run went.
 */
#define NO_SUCH_SESSION                                                                             \
	"no such session (a session and its exports are gone once released, and 'profctl record' "    \
	"releases its own when it ends; its run record stays: see 'profctl runs')"

/* Run ids ('profctl runs') have '-' in them: the likeliest id given for a session's. */
static void log_invalid_session_id(const char *id)
{
	fprintf(stderr, "profctl: invalid session id '%s': use letters, digits and '_'%s\n", id,
		strchr(id, '-') ? " (a run id is not a session id: see 'profctl run show')" : "");
}

static int parse_id_argument(int argc, char **argv, const char *usage, const char **ret_id)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		if (c == 'h') {
			printf("Usage: profctl %s\n", usage);
			return 0;
		}
		fprintf(stderr, "Usage: profctl %s\n", usage);
		return -EINVAL;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "Usage: profctl %s\n", usage);
		return -EINVAL;
	}
	*ret_id = argv[optind];
	return 1;
}

/* A session's Target (pid:N, cgroup:PATH, unit:NAME, system); NULL when it is gone meanwhile. */
static char *session_target(sd_bus *bus, const char *path)
{
	char *target = NULL;

	if (sd_bus_get_property_string(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "Target",
				       NULL, &target) < 0)
		return NULL;
	return target;
}

int verb_sessions(const ProfctlContext *ctx, int argc, char **argv)
{
	static const char *const headers[] = { "ID", "PID", "STATE", "TARGET", "PATH" };
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(json_decrefp) json_t *array = json_array();
	_cleanup_table_ Table *table = NULL;
	const char *id, *path, *state;
	uint32_t pid;
	int r;

	r = profctl_no_arguments(argc, argv, "List profd's sessions.");
	if (r <= 0)
		return r < 0 ? PROFCTL_EXIT_USAGE : PROFCTL_EXIT_SUCCESS;
	if (!array || table_new(ELEMENTSOF(headers), headers, &table) < 0)
		return PROFCTL_EXIT_FAILURE;
	if (profctl_bus_open(ctx, &bus) < 0 ||
	    profctl_call_manager(bus, "cannot list sessions", "ListSessions", &reply, "") < 0)
		return PROFCTL_EXIT_FAILURE;

	r = sd_bus_message_enter_container(reply, 'a', "(sous)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(sous)", &id, &path, &pid, &state)) > 0) {
		/* ListSessions keeps its signature: the target is each session's property */
		_cleanup_free_ char *target = session_target(bus, path);
		char pid_text[16];

		snprintf(pid_text, sizeof(pid_text), "%" PRIu32, pid);
		if (table_add_row(table, (const char *const[]){ id, pid_text, state, target, path }) < 0 ||
		    json_array_append_new(array, json_pack("{s:s, s:s, s:I, s:s, s:s?}", "id", id,
							  "path", path, "pid", (json_int_t)pid,
							  "state", state, "target", target)) < 0)
			r = -ENOMEM;
	}
	if (r < 0) {
		fprintf(stderr, "profctl: cannot read the session list: %s\n", strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	if (profctl_print_list(ctx, array, table, "No sessions.") < 0)
		return PROFCTL_EXIT_FAILURE;
	return PROFCTL_EXIT_SUCCESS;
}

/* One property value from a{sv} as JSON; NULL for types the API does not use. */
static json_t *property_to_json(sd_bus_message *m, char type)
{
	union {
		const char *s;
		uint32_t u;
		uint64_t t;
		int b;
	} v;

	if (sd_bus_message_read_basic(m, type, &v) < 0)
		return NULL;
	switch (type) {
	case 's':
		return json_string(v.s);
	case 'u':
		return json_integer(v.u);
	case 't':
		return json_u64_new(v.t);
	case 'b':
		return json_boolean(v.b);
	default:
		return NULL;
	}
}

static int read_properties(sd_bus_message *reply, json_t *object)
{
	const char *name, *contents;
	int r;

	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		json_t *value = NULL;

		r = sd_bus_message_read_basic(reply, 's', &name);
		if (r < 0)
			break;
		r = sd_bus_message_peek_type(reply, NULL, &contents);
		if (r < 0)
			break;
		r = sd_bus_message_enter_container(reply, 'v', contents);
		if (r < 0)
			break;
		if (strlen(contents) == 1)
			value = property_to_json(reply, contents[0]);
		if (!value) {
			r = sd_bus_message_skip(reply, contents);
			value = json_null();
		}
		if (r < 0 || json_object_set_new(object, name, value) < 0)
			return r < 0 ? r : -ENOMEM;
		r = sd_bus_message_exit_container(reply);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	return r;
}

int verb_status(const ProfctlContext *ctx, int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(json_decrefp) json_t *object = json_object();
	sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *path = NULL;
	const char *id, *key;
	json_t *value;
	int r;

	r = parse_id_argument(argc, argv, "status ID", &id);
	if (r <= 0)
		return r < 0 ? PROFCTL_EXIT_USAGE : PROFCTL_EXIT_SUCCESS;
	if (profctl_session_path(id, &path) < 0) {
		log_invalid_session_id(id);
		return PROFCTL_EXIT_USAGE;
	}
	if (!object || profctl_bus_open(ctx, &bus) < 0)
		return PROFCTL_EXIT_FAILURE;
	r = sd_bus_call_method(bus, PROFD_BUS_NAME, path, "org.freedesktop.DBus.Properties", "GetAll", &error,
			       &reply, "s", PROFD_SESSION_INTERFACE);
	if (r < 0) {
		fprintf(stderr, "profctl: cannot get the status of session '%s': %s\n", id,
			sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_OBJECT) ? NO_SUCH_SESSION :
			error.message ? error.message : strerror(-r));
		sd_bus_error_free(&error);
		return PROFCTL_EXIT_FAILURE;
	}
	r = read_properties(reply, object);
	if (r < 0) {
		fprintf(stderr, "profctl: cannot read the status of session '%s': %s\n", id, strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	if (ctx->json)
		return profctl_print_json(object) < 0 ? PROFCTL_EXIT_FAILURE : PROFCTL_EXIT_SUCCESS;
	json_object_foreach(object, key, value) {
		_cleanup_free_ char *text = NULL;

		/* a plain string as it is; numbers (u64 exact) and the rest as JSON */
		if (json_is_string(value) && !json_big_integer_text(value))
			text = strdup(json_string_value(value));
		else
			(void)json_write(value, false, &text);
		printf("%22s: ", key);
		fputs_escaped(text && *text ? text : "-", false, stdout);
		putchar('\n');
	}
	return PROFCTL_EXIT_SUCCESS;
}

/* Call a method of session id; prints the error. */
static int call_session(const ProfctlContext *ctx, const char *id, const char *what, const char *method,
			const char *types, ...)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *path = NULL, *context = NULL;
	va_list ap;
	int r;

	if (profctl_session_path(id, &path) < 0) {
		log_invalid_session_id(id);
		return -EINVAL;
	}
	r = profctl_bus_open(ctx, &bus);
	if (r < 0)
		return r;
	va_start(ap, types);
	r = sd_bus_call_methodv(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, method, &error, NULL, types, ap);
	va_end(ap);
	if (r < 0) {
		if (asprintf(&context, "cannot %s session '%s'", what, id) < 0)
			context = NULL;
		if (sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_OBJECT))
			fprintf(stderr, "profctl: %s: %s\n", context ? context : what, NO_SUCH_SESSION);
		else
			profctl_log_bus_error(context ? context : what, &error, r);
	}
	sd_bus_error_free(&error);
	return r;
}

int verb_stop(const ProfctlContext *ctx, int argc, char **argv)
{
	const char *id;
	int r;

	r = parse_id_argument(argc, argv, "stop ID", &id);
	if (r <= 0)
		return r < 0 ? PROFCTL_EXIT_USAGE : PROFCTL_EXIT_SUCCESS;
	return call_session(ctx, id, "stop", "Stop", "") < 0 ? PROFCTL_EXIT_FAILURE : PROFCTL_EXIT_SUCCESS;
}

/*
 * The session of live run 'id' (its record's profd.session), so that
 * `export --stage NAME RUN` takes a run id too; NULL in *ret when 'id' names
 * no live run the caller sees (it is then taken for a session id).
 */
static int live_run_session(const ProfctlContext *ctx, const char *id, char **ret)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(json_decrefp) json_t *doc = NULL;
	const char *data, *session;
	int r;

	*ret = NULL;
	r = profctl_bus_open(ctx, &bus);
	if (r < 0)
		return r;
	if (sd_bus_call_method(bus, PROFD_BUS_NAME, PROFD_MANAGER_PATH, PROFD_MANAGER_INTERFACE, "GetRun",
			       NULL, &reply, "s", id) < 0 ||
	    sd_bus_message_read(reply, "s", &data) < 0)
		return 0;
	doc = json_loads(data, 0, NULL);
	session = json_string_value(json_object_get(json_object_get(doc, "profd"), "session"));
	if (session && !(*ret = strdup(session)))
		return -ENOMEM;
	return 0;
}

int verb_export(const ProfctlContext *ctx, int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "stage", required_argument, NULL, 's' },
		{ "state", required_argument, NULL, 'S' },
		{}
	};
	static const char usage[] =
		"Usage: profctl export ID -f FORMAT [-o FILE] [--stage NAME] [--state NAME]\n";
	const char *format = NULL, *output = NULL, *stage = NULL, *state = NULL, *id;
	_cleanup_free_ char *session = NULL;
	_cleanup_close_ int fd = -1;
	int c, r;

	while ((c = getopt_long(argc, argv, "hf:o:", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			printf("%s\nWrite a completed session's profile in FORMAT (folded, pprof, firefox,\n"
			       "speedscope, svg, metrics, record) to FILE or standard output.\n"
			       "For a live run (record --stages), --stage and --state keep only the\n"
			       "samples taken in that stage (e.g. decode) or macro state (e.g. scanning);\n"
			       "ID may then be the run's id as well as its session's.\n",
			       usage);
			return PROFCTL_EXIT_SUCCESS;
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 's':
			stage = optarg;
			break;
		case 'S':
			state = optarg;
			break;
		default:
			fputs(usage, stderr);
			return PROFCTL_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !format) {
		fputs(usage, stderr);
		return PROFCTL_EXIT_USAGE;
	}
	if (output) {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "profctl: cannot open '%s': %s\n", output, strerror(errno));
			return PROFCTL_EXIT_FAILURE;
		}
	}
	if ((stage || state) && live_run_session(ctx, argv[optind], &session) < 0)
		return PROFCTL_EXIT_FAILURE;
	id = session ?: argv[optind];
	fflush(stdout);
	if (stage && state)
		r = call_session(ctx, id, "export", "ExportFilteredToFd", "sa{sv}h", format, 2,
				 "stage", "s", stage, "state", "s", state, fd >= 0 ? fd : STDOUT_FILENO);
	else if (stage || state)
		r = call_session(ctx, id, "export", "ExportFilteredToFd", "sa{sv}h", format, 1,
				 stage ? "stage" : "state", "s", stage ?: state,
				 fd >= 0 ? fd : STDOUT_FILENO);
	else
		r = call_session(ctx, argv[optind], "export", "ExportToFd", "sh", format,
				 fd >= 0 ? fd : STDOUT_FILENO);
	if (r < 0) {
		if (output)
			(void)unlink(output); /* leave no empty or partial file behind */
		return PROFCTL_EXIT_FAILURE;
	}
	return PROFCTL_EXIT_SUCCESS;
}
