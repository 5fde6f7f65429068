/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profctl record --stages -- CMD: run a command built with libprofd-live as a
 * live run. The command is told where profd is (PROFD_LIVE, and the rate and
 * ceiling in PROFD_LIVE_HZ and PROFD_LIVE_DURATION_USEC) and opens the run
 * itself (BeginRun: profd samples the caller); profctl finds the run's session
 * by the command's pid, shows progress, and once the command has finished and
 * profd has stored the joined record, writes the outputs and names the run.
 * The session is kept, so `profctl export --stage NAME RUN` works afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "profctl-bus.h"
#include "profctl-record.h"
#include "time-util.h"

static volatile pid_t forward_to;

/* Ctrl-C is the command's to handle: it ends its own run. */
static void forward_signal(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
}

static const char *live_bus(const ProfctlContext *ctx)
{
	switch (ctx->transport) {
	case PROFCTL_USER_BUS:
		return "user";
	case PROFCTL_ADDRESS:
		return ctx->address;
	default:
		return "system";
	}
}

static int spawn_command(const ProfctlContext *ctx, const RecordArgs *a, pid_t *ret)
{
	char hz[16], duration[32];
	pid_t pid;

	snprintf(hz, sizeof(hz), "%" PRIu32, a->options.hz);
	snprintf(duration, sizeof(duration), "%" PRIu64, a->options.duration_nanos / 1000);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return negative_errno();
	if (pid == 0) {
		if (setenv("PROFD_LIVE", live_bus(ctx), 1) < 0 ||
		    (a->options.hz && setenv("PROFD_LIVE_HZ", hz, 1) < 0) ||
		    (a->duration_given && setenv("PROFD_LIVE_DURATION_USEC", duration, 1) < 0))
			_exit(127);
		execvp(a->command[0], a->command);
		fprintf(stderr, "profctl record: cannot run '%s': %s\n", a->command[0], strerror(errno));
		_exit(127);
	}
	*ret = pid;
	return 0;
}

/* The newest session of process 'pid': its path, and its state (NULL when there is none). */
static int find_session(sd_bus *bus, pid_t pid, char **ret_path, char **ret_state)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *id, *path, *state;
	uint32_t p;
	int r;

	r = sd_bus_call_method(bus, PROFD_BUS_NAME, PROFD_MANAGER_PATH, PROFD_MANAGER_INTERFACE,
			       "ListSessions", NULL, &reply, "");
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "(sous)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(sous)", &id, &path, &p, &state)) > 0)
		if (p == (uint32_t)pid) {
			free(*ret_path);
			free(*ret_state);
			*ret_path = strdup(path);
			*ret_state = strdup(state);
			if (!*ret_path || !*ret_state)
				return -ENOMEM;
		}
	return r;
}

static bool busy(const char *state)
{
	return state && (strcmp(state, "sampling") == 0 || strcmp(state, "resolving") == 0);
}

/* Until the command exits: progress of its run on a terminal. */
static int wait_command(sd_bus *bus, pid_t pid, int *ret_status, char **path, char **state)
{
	bool progress = isatty(STDERR_FILENO);
	uint64_t start = clock_nanos(CLOCK_MONOTONIC), samples = 0, dropped = 0;

	for (;;) {
		pid_t w = waitpid(pid, ret_status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return negative_errno();
		if (!*path || busy(*state))
			(void)find_session(bus, pid, path, state);
		if (progress && *path &&
		    sd_bus_get_property_trivial(bus, PROFD_BUS_NAME, *path, PROFD_SESSION_INTERFACE,
						"SamplesCaptured", NULL, 't', &samples) >= 0 &&
		    sd_bus_get_property_trivial(bus, PROFD_BUS_NAME, *path, PROFD_SESSION_INTERFACE,
						"SamplesDropped", NULL, 't', &dropped) >= 0) {
			record_progress((double)(clock_nanos(CLOCK_MONOTONIC) - start) / 1e9, 0,
					samples, dropped, false);
		}
		(void)poll(NULL, 0, 100);
	}
	if (progress && *path)
		fputc('\n', stderr);
	return 0;
}

int record_stages(const ProfctlContext *ctx, const RecordArgs *a)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_free_ char *path = NULL, *state = NULL, *run_id = NULL, *error = NULL;
	struct sigaction sa = { .sa_handler = forward_signal }, old_int, old_term;
	char how[64];
	pid_t pid;
	int status, r;

	if (profctl_bus_open(ctx, &bus) < 0)
		return PROFCTL_EXIT_FAILURE;
	r = spawn_command(ctx, a, &pid);
	if (r < 0) {
		fprintf(stderr, "profctl record: cannot start '%s': %s\n", a->command[0], strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	forward_to = pid;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	r = wait_command(bus, pid, &status, &path, &state);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	forward_to = 0;
	if (r < 0) {
		fprintf(stderr, "profctl record: cannot wait for '%s': %s\n", a->command[0], strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	held_child_describe_status(status, how, sizeof(how));
	fprintf(stderr, "profctl record: '%s' %s\n", a->command[0], how);

	/* its run ends with it (or earlier): wait for profd to store it */
	(void)find_session(bus, pid, &path, &state);
	if (!path) {
		fprintf(stderr, "profctl record: '%s' opened no live run with profd; is it built with "
				"libprofd-live, calling profd_live_begin()?\n", a->command[0]);
		return PROFCTL_EXIT_FAILURE;
	}
	while (busy(state)) {
		(void)poll(NULL, 0, 100);
		free(state);
		state = NULL;
		r = sd_bus_get_property_string(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "State",
					       NULL, &state);
		if (r < 0) {
			fprintf(stderr, "profctl record: lost track of the run's session: %s\n", strerror(-r));
			return PROFCTL_EXIT_FAILURE;
		}
	}
	if (strcmp(state, "completed") != 0) {
		(void)sd_bus_get_property_string(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE,
						 "Error", NULL, &error);
		fprintf(stderr, "profctl record: the run's session failed%s%s\n", error ? ": " : "",
			error ?: "");
		return PROFCTL_EXIT_FAILURE;
	}
	for (size_t i = 0; i < a->n_outputs && r >= 0; i++)
		r = record_export_output(bus, &a->outputs[i], path);
	if (sd_bus_get_property_string(bus, PROFD_BUS_NAME, path, PROFD_SESSION_INTERFACE, "RunId", NULL,
				       &run_id) >= 0 && isatty(STDERR_FILENO))
		fprintf(stderr, "profctl record: run %s ('profctl run show %s', "
				"'profctl export --stage NAME %s')\n", run_id, run_id, run_id);
	if (r < 0)
		return PROFCTL_EXIT_FAILURE;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? PROFCTL_EXIT_SUCCESS
							     : PROFCTL_EXIT_FAILURE;
}
