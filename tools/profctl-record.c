/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profctl record: sample a process (or a command started for it) and write
 * its profile, metrics or run record; in-process with --local, else through
 * profd (profctl-record-bus.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "profctl-record.h"
#include "stack-resolver.h"

/* The session Ctrl-C stops; set only while sampling runs. */
static SamplingSession *volatile interrupt_target;

static void on_interrupt(int sig)
{
	SamplingSession *s = interrupt_target;

	/* sampling_session_stop() only write()s an eventfd: async-signal-safe */
	if (s)
		sampling_session_stop(s);
}

static void record_help(FILE *f)
{
	fprintf(f,
		"Usage: profctl [--local] record -p PID [OPTIONS]\n"
		"       profctl [--local] record [OPTIONS] -- CMD [ARGS...]\n"
		"\n"
		"Sample a process, or a command from its first instruction to its exit,\n"
		"and write its profile.\n"
		"\n"
		"  -p, --pid=PID          process to profile\n"
		"  -F, --freq=HZ          samples per second per thread (default 99, at most 10000)\n"
		"  -d, --duration=SECONDS how long to sample (default 10, or until CMD exits;\n"
		"                         the daemon's ceiling applies, 60 unless configured)\n"
		"      --backend=NAME     perf-dwarf (default), perf-fp, auto\n"
		"      --event=NAME       cpu-clock (default), task-clock, cycles\n"
		"      --stack-bytes=N    user stack copied per sample in perf-dwarf (default 16384)\n"
		"      --no-kernel        leave kernel frames out\n"
		"  -f, --format=FORMAT    folded, pprof, firefox, speedscope, svg, metrics,\n"
		"                         record (the run record; not with --local)\n"
		"  -o, --output=FILE      write here (default: stdout); the name picks the format;\n"
		"                         give several to write several formats of one session\n"
		"      --local            sample in-process, without the daemon\n"
		"  -h, --help             show this help\n"
		"\n"
		"Ctrl-C ends sampling early and still writes the output.\n");
}

static int parse_u32(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > UINT32_MAX)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

static int parse_seconds(const char *s, uint64_t *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e9)
		return -EINVAL;
	*ret = (uint64_t)(v * 1e9);
	return 0;
}

/* Returns 0, or an exit status. */
static int parse_args(int argc, char **argv, bool *local, RecordArgs *a)
{
	enum { ARG_BACKEND = 0x100, ARG_EVENT, ARG_STACK_BYTES, ARG_NO_KERNEL, ARG_LOCAL };
	static const struct option options[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "backend", required_argument, NULL, ARG_BACKEND },
		{ "event", required_argument, NULL, ARG_EVENT },
		{ "stack-bytes", required_argument, NULL, ARG_STACK_BYTES },
		{ "no-kernel", no_argument, NULL, ARG_NO_KERNEL },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "local", no_argument, NULL, ARG_LOCAL },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *format = NULL;
	uint32_t pid = 0;
	int c;

	/* '+': stop at the command, so its own options stay its own */
	while ((c = getopt_long(argc, argv, "+p:F:d:f:o:h", options, NULL)) >= 0) {
		switch (c) {
		case 'p':
			if (parse_u32(optarg, &pid) < 0 || pid == 0 || pid > INT32_MAX) {
				fprintf(stderr, "profctl record: invalid pid '%s'\n", optarg);
				return PROFCTL_EXIT_USAGE;
			}
			break;
		case 'F':
			if (parse_u32(optarg, &a->options.hz) < 0 || a->options.hz == 0) {
				fprintf(stderr, "profctl record: invalid frequency '%s'\n", optarg);
				return PROFCTL_EXIT_USAGE;
			}
			break;
		case 'd':
			if (parse_seconds(optarg, &a->options.duration_nanos) < 0) {
				fprintf(stderr, "profctl record: invalid duration '%s'\n", optarg);
				return PROFCTL_EXIT_USAGE;
			}
			a->duration_given = true;
			break;
		case ARG_BACKEND:
			a->options.backend = optarg;
			break;
		case ARG_EVENT:
			a->options.event = optarg;
			break;
		case ARG_STACK_BYTES:
			if (parse_u32(optarg, &a->options.stack_bytes) < 0 || a->options.stack_bytes == 0 ||
			    a->options.stack_bytes > SAMPLING_MAX_STACK_BYTES) {
				fprintf(stderr, "profctl record: invalid stack size '%s' (1..%u)\n", optarg,
					SAMPLING_MAX_STACK_BYTES);
				return PROFCTL_EXIT_USAGE;
			}
			break;
		case ARG_NO_KERNEL:
			a->options.exclude_kernel = true;
			a->kernel_given = true;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			if (a->n_outputs == RECORD_MAX_OUTPUTS) {
				fprintf(stderr, "profctl record: at most %d outputs\n", RECORD_MAX_OUTPUTS);
				return PROFCTL_EXIT_USAGE;
			}
			a->outputs[a->n_outputs++].path = optarg;
			break;
		case ARG_LOCAL:
			*local = true;
			break;
		case 'h':
			record_help(stdout);
			return -1;
		default:
			return PROFCTL_EXIT_USAGE;
		}
	}
	if (optind < argc && pid != 0) {
		fprintf(stderr, "profctl record: give either -p PID or a command, not both\n");
		return PROFCTL_EXIT_USAGE;
	}
	if (optind == argc && pid == 0) {
		fprintf(stderr, "profctl record: no process given; use -p PID or -- CMD [ARGS...]\n");
		return PROFCTL_EXIT_USAGE;
	}
	a->pid = (pid_t)pid;
	if (optind < argc)
		a->command = argv + optind;

	if (a->n_outputs == 0)
		a->n_outputs = 1; /* stdout */
	if (format && a->n_outputs > 1) {
		fprintf(stderr, "profctl record: -f goes with one output; with several, each name picks its format\n");
		return PROFCTL_EXIT_USAGE;
	}
	for (size_t i = 0; i < a->n_outputs; i++) {
		RecordOutput *o = &a->outputs[i];

		if (format) {
			if (export_format_from_string(format, &o->format) < 0) {
				fprintf(stderr, "profctl record: unknown format '%s'\n", format);
				return PROFCTL_EXIT_USAGE;
			}
		} else if (!o->path)
			o->format = EXPORT_FOLDED;
		else if (export_format_from_filename(o->path, &o->format) < 0) {
			fprintf(stderr, "profctl record: cannot tell the format from the name '%s'; use -f\n",
				o->path);
			return PROFCTL_EXIT_USAGE;
		}
		if (o->format == EXPORT_RECORD && *local) {
			fprintf(stderr, "profctl record: format 'record' needs the daemon's run bookkeeping; "
					"drop --local\n");
			return PROFCTL_EXIT_USAGE;
		}
	}
	return 0;
}

static void print_session_error(const RecordArgs *a, int r)
{
	if (r == -EOPNOTSUPP && a->options.backend && sampling_backend_check(a->options.backend) < 0)
		fprintf(stderr, "profctl record: backend '%s' is not supported yet\n",
			a->options.backend);
	else if (r == -EOPNOTSUPP)
		fprintf(stderr, "profctl record: event '%s' is not supported here (no hardware PMU?)\n",
			a->options.event ? a->options.event : "cpu-clock");
	else if (r == -EINVAL && a->options.backend && sampling_backend_check(a->options.backend) < 0)
		fprintf(stderr, "profctl record: unknown backend '%s'\n", a->options.backend);
	else if (r == -EINVAL && sampling_event_check(a->options.event) < 0)
		fprintf(stderr, "profctl record: unknown event '%s'\n", a->options.event);
	else
		fprintf(stderr, "profctl record: cannot profile pid %d: %s\n", (int)a->pid, strerror(-r));
}

void record_progress(double elapsed, double total, uint64_t samples, uint64_t dropped, bool final)
{
	/* \033[K clears what a longer earlier line left */
	fprintf(stderr, "\r%.1f s of %.1f s, %" PRIu64 " samples, %" PRIu64 " dropped\033[K%s", elapsed, total,
		samples, dropped, final ? "\n" : "");
}

static void print_progress(SamplingSession *s, bool final)
{
	SamplingMetrics m;

	sampling_session_get_metrics(s, &m);
	record_progress(m.duration_nanos / 1e9, m.effective_duration_nanos / 1e9, m.samples_captured,
			m.samples_dropped, final);
}

/* sampling_session_run() of a started session, with live progress on a terminal. */
static int run_session(SamplingSession *s)
{
	bool progress = isatty(STDERR_FILENO);
	uint64_t last = 0;
	int r;

	while ((r = sampling_session_process(s)) > 0) {
		struct epoll_event ev[8];
		struct timespec now;
		uint64_t t;

		if (epoll_wait(sampling_session_get_fd(s), ev, ELEMENTSOF(ev), progress ? 250 : -1) < 0 &&
		    errno != EINTR)
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
		t = (uint64_t)now.tv_sec * 4 + (uint64_t)now.tv_nsec / 250000000;
		if (progress && t != last) {
			print_progress(s, false);
			last = t;
		}
	}
	if (progress)
		print_progress(s, true);
	return r;
}

static int write_output(SamplingSession *s, const RecordOutput *o, FILE *out)
{
	_cleanup_free_ char *json = NULL;
	SamplingMetrics m;
	int r;

	switch (o->format) {
	case EXPORT_METRICS:
		sampling_session_get_metrics(s, &m);
		r = sampling_metrics_format_json(&m, &json);
		if (r < 0)
			return r;
		return fputs(json, out) < 0 ? -EIO : 0;
	default:
		return export_profile(sampling_session_get_profile(s), o->format, out);
	}
}

/* A session needs threads x CPUs fds; the soft limit of 1024 is too low for big targets. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void close_outputs(FILE **out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (out[i] && out[i] != stdout)
			fclose(out[i]);
}

static int record_local(const RecordArgs *a, HeldChild *child)
{
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	_cleanup_(stack_resolver_freep) StackResolver *resolver = NULL;
	FILE *out[RECORD_MAX_OUTPUTS] = {};
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int, old_term;
	StackResolverOptions ro = { .kernel = !a->options.exclude_kernel };
	SamplingOptions options = a->options;
	int r, k = 0;
	r = stack_unwind_mode_from_backend(options.backend, &ro.mode);
	if (r >= 0)
		r = stack_resolver_new(&ro, &resolver);
	if (r == -EINVAL) {
		fprintf(stderr, "profctl record: unknown backend '%s'\n", options.backend);
		return PROFCTL_EXIT_FAILURE;
	}
	if (r < 0) {
		fprintf(stderr, "profctl record: cannot set up the unwinder: %s\n", strerror(-r));
		return PROFCTL_EXIT_FAILURE;
	}
	options.resolve = stack_resolver_resolve;
	options.resolve_userdata = resolver;
	if (child && !a->duration_given)
		options.duration_nanos = SAMPLING_DEFAULT_MAX_DURATION_NANOS; /* until the command exits */

	raise_fd_limit();
	r = sampling_session_new(child ? child->pid : a->pid, &options, &s);
	if (r < 0) {
		print_session_error(a, r);
		return PROFCTL_EXIT_FAILURE;
	}
	/* open the outputs first: a bad path should fail before sampling, not after */
	for (size_t i = 0; i < a->n_outputs; i++) {
		out[i] = a->outputs[i].path ? fopen(a->outputs[i].path, "we") : stdout;
		if (!out[i]) {
			fprintf(stderr, "profctl record: cannot open '%s': %s\n", a->outputs[i].path,
				strerror(errno));
			close_outputs(out, i);
			return PROFCTL_EXIT_FAILURE;
		}
	}

	interrupt_target = s;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	r = sampling_session_start(s);
	if (r >= 0 && child)
		r = held_child_release(child);
	if (r >= 0)
		r = run_session(s);
	interrupt_target = NULL;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (r < 0) {
		/* the partial profile is still written: it covers what was sampled */
		fprintf(stderr, "profctl record: sampling pid %d failed: %s\n",
			(int)(child ? child->pid : a->pid), strerror(-r));
	}

	for (size_t i = 0; i < a->n_outputs && k >= 0; i++) {
		k = write_output(s, &a->outputs[i], out[i]);
		if (k >= 0 && fflush(out[i]) != 0)
			k = -errno;
		if (k < 0)
			fprintf(stderr, "profctl record: cannot write '%s': %s\n",
				a->outputs[i].path ?: "stdout", strerror(-k));
	}
	close_outputs(out, a->n_outputs);
	return r < 0 || k < 0 ? PROFCTL_EXIT_FAILURE : PROFCTL_EXIT_SUCCESS;
}

int record_report_child(HeldChild *child, char *const *command)
{
	char how[64];
	int status, r;

	r = held_child_wait(child, &status);
	if (r < 0) {
		fprintf(stderr, "profctl record: cannot wait for '%s': %s\n", command[0], strerror(-r));
		return r;
	}
	held_child_describe_status(status, how, sizeof(how));
	fprintf(stderr, "profctl record: '%s' %s\n", command[0], how);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

int verb_record(const ProfctlContext *ctx, int argc, char **argv)
{
	RecordArgs a = {};
	HeldChild child = { .release_fd = -1 };
	bool local = ctx->transport == PROFCTL_LOCAL;
	int r;

	r = parse_args(argc, argv, &local, &a);
	if (r < 0)
		return PROFCTL_EXIT_SUCCESS; /* --help */
	if (r > 0)
		return r;
	if (a.command) {
		r = held_child_spawn(a.command, &child);
		if (r < 0) {
			fprintf(stderr, "profctl record: cannot start '%s': %s\n", a.command[0], strerror(-r));
			return PROFCTL_EXIT_FAILURE;
		}
	}
	r = local ? record_local(&a, a.command ? &child : NULL) :
		    record_through_daemon(ctx, &a, a.command ? &child : NULL);
	if (a.command) {
		if (child.release_fd >= 0)
			held_child_abort(&child); /* sampling never started: the command must not run */
		else
			(void)record_report_child(&child, a.command);
	}
	return r;
}
