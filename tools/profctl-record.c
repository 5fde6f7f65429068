/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profctl record: sample a process (or a command started for it) and write
 * its profile, metrics or run record; in-process with --local, else through
 * profd (profctl-record-bus.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "collector.h"
#include "fd-limit.h"
#include "parse-number.h"
#include "profctl-record.h"
#include "session-run.h"
#include "unit-cgroup.h"

/* The collector Ctrl-C stops; set only while sampling runs. */
static Collector *volatile interrupt_target;

static void on_interrupt(int sig)
{
	Collector *c = interrupt_target;

	/* collector_stop() only write()s an eventfd: async-signal-safe */
	if (c)
		collector_stop(c);
}

static void record_help(FILE *f)
{
	fprintf(f,
		"Usage: profctl [--local] record -p PID [OPTIONS]\n"
		"       profctl [--local] record [OPTIONS] -- CMD [ARGS...]\n"
		"       profctl [--local] record (--cgroup=PATH | --unit=NAME | -a) [OPTIONS]\n"
		"       profctl record --stages [OPTIONS] -- CMD [ARGS...]\n"
		"\n"
		"Sample a process, a command from its first instruction to its exit, the\n"
		"processes of a cgroup or systemd unit, or the whole machine, and write\n"
		"its profile.\n"
		"\n"
		"  -p, --pid=PID          process to profile\n"
		"      --cgroup=PATH      every process of a cgroup (v2 path, absolute or\n"
		"                         relative to the cgroup2 mount) and below it\n"
		"      --unit=NAME        every process of a systemd unit (system, else yours)\n"
		"  -a, --all-cpus         the whole machine (perf's -a)\n"
		"  -F, --freq=HZ          samples per second per thread (default 99, at most 10000)\n"
		"  -d, --duration=SECONDS how long to sample (default 10, or until CMD exits;\n"
		"                         the daemon's ceiling applies, 60 unless configured)\n"
		"      --backend=NAME     auto (default: bpf for -a, perf-dwarf otherwise),\n"
		"                         perf-dwarf, perf-fp, bpf\n"
		"      --event=NAME       cpu-clock (default), task-clock, cycles\n"
		"      --stack-bytes=N    most user stack copied per sample in perf-dwarf (default 16384;\n"
		"                         profd copies less once it has learned what the program needs)\n"
		"      --no-kernel        leave kernel frames out\n"
		"  -f, --format=FORMAT    folded, pprof, firefox, speedscope, svg, metrics,\n"
		"                         record (the run record)\n"
		"  -o, --output=FILE      write here (default: stdout); the name picks the format;\n"
		"                         give several to write several formats of one session\n"
		"      --local            sample in-process, without the daemon\n"
		"      --stages           CMD is built with libprofd-live: it opens a live run\n"
		"                         itself, and its stage spans are joined with its samples\n"
		"                         (then: profctl export --stage NAME SESSION)\n"
		"  -h, --help             show this help\n"
		"\n"
		"Ctrl-C ends sampling early and still writes the output.\n");
}

static int parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 || v > UINT32_MAX)
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
	enum { ARG_BACKEND = 0x100, ARG_EVENT, ARG_STACK_BYTES, ARG_NO_KERNEL, ARG_LOCAL, ARG_CGROUP,
	       ARG_UNIT, ARG_STAGES };
	static const struct option options[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, ARG_CGROUP },
		{ "unit", required_argument, NULL, ARG_UNIT },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "backend", required_argument, NULL, ARG_BACKEND },
		{ "event", required_argument, NULL, ARG_EVENT },
		{ "stack-bytes", required_argument, NULL, ARG_STACK_BYTES },
		{ "no-kernel", no_argument, NULL, ARG_NO_KERNEL },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "local", no_argument, NULL, ARG_LOCAL },
		{ "stages", no_argument, NULL, ARG_STAGES },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *format = NULL;
	uint32_t pid = 0;
	int c;

	/* '+': stop at the command, so its own options stay its own */
	while ((c = getopt_long(argc, argv, "+p:F:d:f:o:ah", options, NULL)) >= 0) {
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
		case ARG_CGROUP:
			a->cgroup = optarg;
			break;
		case ARG_UNIT:
			a->unit = optarg;
			break;
		case 'a':
			a->system = true;
			break;
		case ARG_STAGES:
			a->stages = true;
			break;
		case 'h':
			record_help(stdout);
			return -1;
		default:
			return PROFCTL_EXIT_USAGE;
		}
	}
	if ((optind < argc) + (pid != 0) + !!a->cgroup + !!a->unit + a->system > 1) {
		fprintf(stderr, "profctl record: give one of -p PID, --cgroup, --unit, -a or a command\n");
		return PROFCTL_EXIT_USAGE;
	}
	if (optind == argc && pid == 0 && !a->cgroup && !a->unit && !a->system) {
		fprintf(stderr, "profctl record: nothing to profile; use -p PID, --cgroup PATH, "
				"--unit NAME, -a or -- CMD [ARGS...]\n");
		return PROFCTL_EXIT_USAGE;
	}
	a->pid = (pid_t)pid;
	if (optind < argc)
		a->command = argv + optind;
	if (a->stages && (!a->command || *local)) {
		fprintf(stderr, "profctl record: --stages runs a command through profd: "
				"give -- CMD [ARGS...], without --local\n");
		return PROFCTL_EXIT_USAGE;
	}

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
	}
	return 0;
}

const char *record_target_text(const RecordArgs *a, pid_t pid, char *buf, size_t size)
{
	if (a->cgroup)
		snprintf(buf, size, "cgroup '%s'", a->cgroup);
	else if (a->unit)
		snprintf(buf, size, "unit '%s'", a->unit);
	else if (a->system)
		snprintf(buf, size, "the system");
	else
		snprintf(buf, size, "pid %d", (int)pid);
	return buf;
}

static void print_session_error(const RecordArgs *a, pid_t pid, int r)
{
	char what[PATH_MAX + 32];

	if (r == -EOPNOTSUPP && a->options.backend && sampling_backend_check(a->options.backend) < 0)
		fprintf(stderr, "profctl record: backend '%s' is not available here (needs BPF: "
				"kernel BTF, root or CAP_BPF+CAP_PERFMON, a build with -Dbpf)\n",
			a->options.backend);
	else if (r == -EOPNOTSUPP)
		fprintf(stderr, "profctl record: event '%s' is not supported here (no hardware PMU?)\n",
			a->options.event ? a->options.event : "cpu-clock");
	else if (r == -EINVAL && a->options.backend && sampling_backend_check(a->options.backend) < 0)
		fprintf(stderr, "profctl record: unknown backend '%s'\n", a->options.backend);
	else if (r == -EINVAL && sampling_event_check(a->options.event) < 0)
		fprintf(stderr, "profctl record: unknown event '%s'\n", a->options.event);
	else
		fprintf(stderr, "profctl record: cannot profile %s: %s\n",
			record_target_text(a, pid, what, sizeof(what)), strerror(-r));
}

void record_progress(double elapsed, double total, uint64_t samples, uint64_t dropped, bool final)
{
	/* \033[K clears what a longer earlier line left */
	fprintf(stderr, "\r%.1f s of %.1f s, %" PRIu64 " samples, %" PRIu64 " dropped\033[K%s", elapsed, total,
		samples, dropped, final ? "\n" : "");
}

void record_report_clamp(const RecordArgs *a, uint32_t hz, uint64_t duration_nanos,
			 const char *hz_ceiling, const char *duration_ceiling)
{
	uint32_t asked_hz = a->options.hz ?: SAMPLING_DEFAULT_HZ;
	uint64_t asked_nanos = a->options.duration_nanos ?: SAMPLING_DEFAULT_DURATION_NANOS;

	if (hz < asked_hz)
		fprintf(stderr, "profctl record: sampling at %" PRIu32 " Hz, not the %" PRIu32
				" Hz asked: %s\n", hz, asked_hz, hz_ceiling);
	/* a command without -d runs up to the ceiling: it asked for no duration */
	if (a->duration_given && duration_nanos < asked_nanos)
		fprintf(stderr, "profctl record: sampling for %.1f s, not the %.1f s asked: %s\n",
			(double)duration_nanos / 1e9, (double)asked_nanos / 1e9, duration_ceiling);
}

static void print_progress(Collector *c, bool final)
{
	SamplingMetrics m;

	collector_get_metrics(c, &m);
	record_progress(m.duration_nanos / 1e9, m.effective_duration_nanos / 1e9, m.samples_captured,
			m.samples_dropped, final);
}

/* Wait for a started collector, with live progress on a terminal. */
static int run_collector(Collector *c)
{
	struct pollfd p = { .fd = collector_get_fd(c), .events = POLLIN };

	if (!isatty(STDERR_FILENO))
		return collector_wait(c);
	/* the collector works on threads of its own: we only watch */
	for (;;) {
		int n = poll(&p, 1, 250);

		if (n > 0 || (n < 0 && errno != EINTR))
			break;
		print_progress(c, false);
	}
	print_progress(c, true);
	return collector_wait(c);
}

static int write_output(Collector *c, const Profile *profile, const RunProfile *record,
			const json_t *metrics_extra, const RecordOutput *o, FILE *out)
{
	_cleanup_free_ char *json = NULL;
	SamplingMetrics m;
	int r;

	switch (o->format) {
	case EXPORT_RECORD:
		/* as profd stores and exports it: pretty, with a final newline */
		r = record_serialise(record, true, &json);
		if (r < 0)
			return r;
		return fputs(json, out) < 0 || fputc('\n', out) < 0 ? -EIO : 0;
	case EXPORT_METRICS:
		collector_get_metrics(c, &m);
		r = sampling_metrics_format_json_with(&m, metrics_extra, &json);
		if (r < 0)
			return r;
		return fputs(json, out) < 0 ? -EIO : 0;
	default:
		return export_profile(profile, o->format, out);
	}
}

static void close_outputs(FILE **out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (out[i] && out[i] != stdout)
			fclose(out[i]);
}

static bool wants_record(const RecordArgs *a)
{
	for (size_t i = 0; i < a->n_outputs; i++)
		if (a->outputs[i].format == EXPORT_RECORD)
			return true;
	return false;
}

/* Write the outputs of one kind (the run record, or the rest); stops at the first failure. */
static int write_outputs(const RecordArgs *a, FILE **out, bool records, Collector *c,
			 const Profile *profile, const RunProfile *record,
			 const json_t *metrics_extra)
{
	int k = 0;

	for (size_t i = 0; i < a->n_outputs && k >= 0; i++) {
		if ((a->outputs[i].format == EXPORT_RECORD) != records)
			continue;
		k = write_output(c, profile, record, metrics_extra, &a->outputs[i], out[i]);
		if (k >= 0 && fflush(out[i]) != 0)
			k = -errno;
		if (k < 0)
			fprintf(stderr, "profctl record: cannot write '%s': %s\n",
				a->outputs[i].path ?: "stdout", strerror(-k));
	}
	return k;
}

/* The target of -a, --cgroup or --unit (NULL for a pid or a command); prints what failed. */
static int local_target(const RecordArgs *a, SamplingTarget **ret)
{
	_cleanup_free_ char *cgroup = NULL;
	int r;

	*ret = NULL;
	if (a->system) {
		r = sampling_target_new_system(NULL, 0, ret);
		if (r < 0)
			fprintf(stderr, "profctl record: cannot profile the system: %s\n", strerror(-r));
		return r;
	}
	if (a->unit) {
		r = unit_cgroup_resolve(a->unit, getuid(), &cgroup);
		if (r < 0) {
			fprintf(stderr, "profctl record: cannot find the control group of unit '%s': %s\n",
				a->unit, r == -ENOENT ? "no such unit loaded" :
					 r == -ENODEV ? "it has none (inactive?)" :
					 r == -EINVAL ? "not a unit name of a type with processes" :
					 r == -EHOSTUNREACH ? "systemd is not reachable (system bus, "
							      "or your user manager)" :
					 strerror(-r));
			return r;
		}
	}
	if (a->unit || a->cgroup) {
		r = sampling_target_new_cgroup(cgroup ?: a->cgroup, ret);
		if (r < 0)
			fprintf(stderr, "profctl record: cannot profile cgroup '%s': %s\n",
				cgroup ?: a->cgroup, r == -EMEDIUMTYPE ? "not a cgroup2 directory" :
						     strerror(-r));
		else if (a->unit)
			r = sampling_target_set_unit(*ret, a->unit);
		return r;
	}
	return 0;
}

static int record_local(const RecordArgs *a, HeldChild *child)
{
	_cleanup_collector_ Collector *c = NULL;
	_cleanup_profile_ Profile *profile = NULL;
	_cleanup_(run_recorder_freep) RunRecorder *run = NULL;
	_cleanup_(run_profile_freep) RunProfile *record = NULL;
	_cleanup_(sampling_target_freep) SamplingTarget *target = NULL;
	_cleanup_(json_decrefp) json_t *quality = NULL, *metrics_extra = NULL;
	FILE *out[RECORD_MAX_OUTPUTS] = {};
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int, old_term;
	CollectorOptions options = { .sampling = a->options };
	pid_t pid = child ? child->pid : a->pid;
	SamplingMetrics m;
	char what[PATH_MAX + 32];
	int r, k = 0;

	if (child && !a->duration_given)
		options.sampling.duration_nanos = SAMPLING_DEFAULT_MAX_DURATION_NANOS; /* until the command exits */
	if (local_target(a, &target) < 0)
		return PROFCTL_EXIT_FAILURE;
	options.sampling.target = target;

	(void)raise_fd_limit(); /* too low, the session says so when it opens its events */
	/* the run record, as profd makes it for a session (session-run.h) */
	if (wants_record(a)) {
		r = session_run_begin(pid,
				      &(SessionRunOptions){
					      .workload_class = child ? basename(a->command[0]) : NULL,
					      .backend_requested = a->options.backend,
					      .daemon_state = DAEMON_STATE_OFF },
				      &run);
		if (r < 0) {
			print_session_error(a, pid, r);
			return PROFCTL_EXIT_FAILURE;
		}
	}
	r = collector_new(pid, &options, &c);
	if (r < 0) {
		print_session_error(a, pid, r);
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

	interrupt_target = c;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	r = collector_start(c);
	if (r >= 0) {
		collector_get_metrics(c, &m);
		record_report_clamp(a, m.hz, m.effective_duration_nanos,
				    "the kernel's perf_event_max_sample_rate (10000 Hz at most)",
				    "the longest session without profd");
	}
	if (r >= 0 && run)
		r = session_run_sampling(run, &options.sampling, &m);
	if (r >= 0 && child)
		r = held_child_release(child);
	if (r < 0)
		collector_stop(c);
	k = run_collector(c);
	if (r >= 0)
		r = k;
	k = 0;
	interrupt_target = NULL;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (r < 0) {
		/* the partial profile is still written: it covers what was sampled */
		fprintf(stderr, "profctl record: sampling %s failed: %s\n",
			record_target_text(a, pid, what, sizeof(what)), strerror(-r));
	}

	profile = collector_steal_profile(c);
	/* as profd has it: in the metrics, in the record, and printed when stacks are poor */
	if (collector_get_stack_quality(c, NULL, NULL, &quality) >= 0 &&
	    !(metrics_extra = json_pack("{s:O}", "stack_quality", quality)))
		k = -ENOMEM;
	if (run && k >= 0) {
		collector_get_metrics(c, &m);
		k = session_run_resolving(run, &m, collector_cache_state(c));
		if (k >= 0)
			k = run_recorder_transition(run, RUN_STATE_REPORTING);
	}
	if (k >= 0)
		k = write_outputs(a, out, false, c, profile, NULL, metrics_extra);
	if (k >= 0 && run) {
		k = run_recorder_finish(run, r < 0 || k < 0 ? RUN_STATE_FAILED : RUN_STATE_COMPLETED,
					&record);
		if (k >= 0)
			k = session_run_add_stack_quality(record, quality);
		if (k >= 0)
			k = write_outputs(a, out, true, c, profile, record, NULL);
		else
			fprintf(stderr, "profctl record: cannot finish the run record: %s\n", strerror(-k));
	}
	close_outputs(out, a->n_outputs);
	if (quality)
		(void)stack_quality_print(quality, stderr);
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
	HeldChild child = {};
	bool local = ctx->transport == PROFCTL_LOCAL;
	int r;

	r = parse_args(argc, argv, &local, &a);
	if (r < 0)
		return PROFCTL_EXIT_SUCCESS; /* --help */
	if (r > 0)
		return r;
	if (a.stages)
		return record_stages(ctx, &a);
	if (a.command) {
		const char *step = NULL;

		r = held_child_spawn(a.command, &child, &step);
		if (r < 0 && step && strcmp(step, "ptrace") == 0)
			fprintf(stderr, "profctl record: cannot hold '%s' at its start: ptrace: %s; "
					"start it yourself and use -p PID\n", a.command[0], strerror(-r));
		else if (r < 0)
			fprintf(stderr, "profctl record: cannot run '%s': %s\n", a.command[0], strerror(-r));
		if (r < 0)
			return PROFCTL_EXIT_FAILURE;
	}
	r = local ? record_local(&a, a.command ? &child : NULL) :
		    record_through_daemon(ctx, &a, a.command ? &child : NULL);
	if (a.command) {
		if (child.held)
			held_child_abort(&child); /* sampling never started: the command must not run */
		else
			(void)record_report_child(&child, a.command);
	}
	return r;
}
