/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profctl record through profd: StartSession, wait for Finished while showing
 * progress (Ctrl-C asks for Stop), ExportToFd into the output, then Release
 * the session; its run record stays with the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cleanup.h"
#include "profctl-bus.h"
#include "profctl-record.h"
#include "stack-quality.h"
#include "time-util.h"

typedef struct RecordWait {
	const char *path; /* the session's object path */
	char *state;      /* from Finished: "completed", "failed" */
} RecordWait;

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = 1;
}

static double now_seconds(void)
{
	return (double)clock_nanos(CLOCK_MONOTONIC) / 1e9;
}

static int on_finished(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	RecordWait *w = userdata;
	const char *state;

	if (!w->path || strcmp(sd_bus_message_get_path(m), w->path) != 0)
		return 0;
	if (sd_bus_message_read(m, "s", &state) < 0)
		return 0;
	free(w->state);
	w->state = strdup(state);
	return 0;
}

/* a{sv} of the options profctl was given; the daemon's defaults stand for the rest. */
static int append_options(sd_bus_message *m, const RecordArgs *a)
{
	int r;

	r = sd_bus_message_open_container(m, 'a', "{sv}");
	/* nobody would collect a session whose profctl was killed */
	if (r >= 0)
		r = sd_bus_message_append(m, "{sv}", "stop_on_disconnect", "b", true);
	if (r >= 0 && a->options.backend)
		r = sd_bus_message_append(m, "{sv}", "backend", "s", a->options.backend);
	if (r >= 0 && a->options.event)
		r = sd_bus_message_append(m, "{sv}", "event", "s", a->options.event);
	if (r >= 0 && a->kernel_given)
		r = sd_bus_message_append(m, "{sv}", "kernel", "b", !a->options.exclude_kernel);
	if (r >= 0 && a->options.stack_bytes)
		r = sd_bus_message_append(m, "{sv}", "stack_bytes", "u", a->options.stack_bytes);
	/* a held command still has profctl's name; name the run after the command */
	if (r >= 0 && a->command)
		r = sd_bus_message_append(m, "{sv}", "workload_class", "s", basename(a->command[0]));
	/* targets beyond one pid: StartSession's pid is 0 then */
	if (r >= 0 && a->cgroup)
		r = sd_bus_message_append(m, "{sv}", "cgroup", "s", a->cgroup);
	if (r >= 0 && a->unit)
		r = sd_bus_message_append(m, "{sv}", "unit", "s", a->unit);
	if (r >= 0 && a->system)
		r = sd_bus_message_append(m, "{sv}", "system", "b", true);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}

static int get_session_u64(sd_bus *bus, const char *path, const char *property, uint64_t *ret)
{
	return sd_bus_get_property_trivial(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, property, NULL,
					   't', ret);
}

static int start_session(sd_bus *bus, const RecordArgs *a, pid_t pid, uint64_t duration_usec, char **ret_id,
			 char **ret_path)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	const char *id, *path;
	char what[PATH_MAX + 48], target[PATH_MAX + 32];
	int r;

	r = sd_bus_message_new_method_call(bus, &m, PROFD_BUS_NAME, PROFD_MANAGER_PATH, PROFD_MANAGER_INTERFACE,
					   "StartSession");
	if (r >= 0)
		r = sd_bus_message_append(m, "uut", (uint32_t)pid, a->options.hz, duration_usec);
	if (r >= 0)
		r = append_options(m, a);
	if (r < 0)
		return r;
	r = sd_bus_call(bus, m, 0, &error, &reply);
	if (r < 0) {
		snprintf(what, sizeof(what), "cannot profile %s",
			 record_target_text(a, pid, target, sizeof(target)));
		profctl_log_bus_error(what, &error, r);
		sd_bus_error_free(&error);
		return r;
	}
	r = sd_bus_message_read(reply, "so", &id, &path);
	if (r < 0)
		return r;
	*ret_id = strdup(id);
	*ret_path = strdup(path);
	return *ret_id && *ret_path ? 0 : -ENOMEM;
}

/* Until Finished arrives: progress every quarter second, Stop once on Ctrl-C. */
static int wait_finished(sd_bus *bus, RecordWait *w, double total)
{
	bool progress = isatty(STDERR_FILENO), stopped = false;
	double start = now_seconds();
	uint64_t samples = 0, dropped = 0;
	int r;

	while (!w->state) {
		if (interrupted && !stopped) {
			sd_bus_error error = SD_BUS_ERROR_NULL;

			r = sd_bus_call_method(bus, PROFD_BUS_NAME, w->path, PROFD_SESSION_INTERFACE, "Stop",
					       &error, NULL, "");
			if (r < 0)
				profctl_log_bus_error("cannot stop the session", &error, r);
			sd_bus_error_free(&error);
			stopped = true;
		}
		r = sd_bus_process(bus, NULL);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		if (progress && get_session_u64(bus, w->path, "SamplesCaptured", &samples) >= 0 &&
		    get_session_u64(bus, w->path, "SamplesDropped", &dropped) >= 0)
			record_progress(now_seconds() - start, total, samples, dropped, false);
		r = sd_bus_wait(bus, 250000);
		if (r < 0 && r != -EINTR)
			return r;
	}
	if (progress) {
		(void)get_session_u64(bus, w->path, "SamplesCaptured", &samples);
		(void)get_session_u64(bus, w->path, "SamplesDropped", &dropped);
		record_progress(now_seconds() - start, total, samples, dropped, true);
	}
	return 0;
}

static void log_session_error(sd_bus *bus, const char *path)
{
	_cleanup_free_ char *message = NULL;

	if (sd_bus_get_property_string(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "Error", NULL,
				       &message) >= 0 && message && *message)
		fprintf(stderr, "profctl record: the session failed: %s\n", message);
	else
		fprintf(stderr, "profctl record: the session failed\n");
}

int record_export_output(sd_bus *bus, const RecordOutput *o, const char *path)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (o->path) {
		fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "profctl record: cannot open '%s': %s\n", o->path, strerror(errno));
			return -errno;
		}
	}
	fflush(stdout);
	r = sd_bus_call_method(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "ExportToFd", &error, NULL,
			       "sh", export_format_to_string(o->format), fd >= 0 ? fd : STDOUT_FILENO);
	if (r < 0) {
		profctl_log_bus_error("cannot export the profile", &error, r);
		if (o->path)
			(void)unlink(o->path);
	}
	sd_bus_error_free(&error);
	return r;
}

/* The stack-quality block when the session's stacks were poor (GetMetrics' "stack_quality"). */
static void print_stack_quality(sd_bus *bus, const char *path)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(json_decrefp) json_t *metrics = NULL;
	const json_t *quality;
	const char *json;

	if (sd_bus_call_method(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "GetMetrics", NULL,
			       &reply, "") < 0 ||
	    sd_bus_message_read(reply, "s", &json) < 0)
		return;
	metrics = json_loads(json, 0, NULL);
	quality = json_object_get(metrics, "stack_quality");
	if (quality)
		(void)stack_quality_print(quality, stderr);
}

/* What profd's ceilings cut of the request: the session's Hz, and its duration at most MaxDurationUSec. */
static void report_clamp(sd_bus *bus, const RecordArgs *a, const char *path)
{
	uint64_t asked_nanos = a->options.duration_nanos ?: SAMPLING_DEFAULT_DURATION_NANOS, max_usec, max_nanos;
	uint32_t hz;

	if (sd_bus_get_property_trivial(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "Hz", NULL, 'u',
					&hz) < 0 ||
	    sd_bus_get_property_trivial(bus, PROFD_BUS_NAME, PROFD_MANAGER_PATH, PROFD_MANAGER_INTERFACE,
					"MaxDurationUSec", NULL, 't', &max_usec) < 0)
		return;
	max_nanos = max_usec * 1000;
	record_report_clamp(a, hz, asked_nanos < max_nanos ? asked_nanos : max_nanos, "profd's MaxHz",
			    "profd's MaxDurationSec");
}

int record_through_daemon(const ProfctlContext *ctx, const RecordArgs *a, HeldChild *child)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
	_cleanup_free_ char *id = NULL, *path = NULL, *run_id = NULL, *state = NULL;
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int, old_term;
	RecordWait w = {};
	uint64_t duration_usec = a->options.duration_nanos / 1000, effective = 0;
	pid_t pid = child ? child->pid : a->pid;
	int r;

	if (profctl_bus_open(ctx, &bus) < 0)
		return PROFCTL_EXIT_FAILURE;
	/* a command runs to its end, up to the daemon's ceiling, unless -d says otherwise */
	if (child && !a->duration_given &&
	    sd_bus_get_property_trivial(bus, PROFD_BUS_NAME, PROFD_MANAGER_PATH, PROFD_MANAGER_INTERFACE,
					"MaxDurationUSec", NULL, 't', &duration_usec) < 0)
		duration_usec = 0;
	/* subscribe before starting, so a short session cannot finish unseen */
	r = sd_bus_match_signal(bus, &slot, PROFD_BUS_NAME, NULL, PROFD_SESSION_INTERFACE, "Finished", on_finished,
				&w);
	if (r < 0) {
		fprintf(stderr, "profctl record: cannot watch for the end of the session: %s\n", strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	if (start_session(bus, a, pid, duration_usec, &id, &path) < 0)
		return PROFCTL_EXIT_FAILURE;
	w.path = path;
	report_clamp(bus, a, path);

	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	r = child ? held_child_release(child) : 0;
	(void)get_session_u64(bus, path, "DurationUSec", &effective);
	if (r >= 0)
		r = wait_finished(bus, &w, (double)effective / 1e6);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	state = TAKE_PTR(w.state);
	if (r < 0) {
		fprintf(stderr, "profctl record: lost track of session '%s': %s\n", id, strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	if (strcmp(state, "completed") != 0) {
		log_session_error(bus, path);
		return PROFCTL_EXIT_FAILURE;
	}

	for (size_t i = 0; i < a->n_outputs && r >= 0; i++)
		r = record_export_output(bus, &a->outputs[i], path);
	print_stack_quality(bus, path);
	if (sd_bus_get_property_string(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "RunId", NULL,
				       &run_id) >= 0 && isatty(STDERR_FILENO))
		fprintf(stderr, "profctl record: run %s ('profctl run show %s')\n", run_id, run_id);
	/* the session's exports go with it; its run record stays with the daemon */
	(void)sd_bus_call_method(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "Release", NULL, NULL, "");
	return r < 0 ? PROFCTL_EXIT_FAILURE : PROFCTL_EXIT_SUCCESS;
}
