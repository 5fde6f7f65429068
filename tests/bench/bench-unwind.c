/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-unwind WORKLOAD [PERF [MEMORY_SECONDS]]: CPU per sample of DWARF
 * unwinding + naming (StackResolver), cold and warm, on real 16 KiB samples
 * of WORKLOAD (workload-split, 2 threads), beside perf record + report on the
 * same workload; then the memory of a long 999 Hz 2-thread session.
 *
 * Samples are captured once from a real sampling session (deep copies), then
 * replayed through fresh resolvers, so every case sees identical input.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "address-space.h"
#include "cleanup.h"
#include "dwarf-unwind.h"
#include "sampling-session.h"
#include "stack-resolver.h"
#include "unwind-harness.h"

#define CAPTURE_MAX 4000
#define CAPTURE_SECONDS 12
#define ROUNDS 5

typedef struct Captured {
	PerfSample sample; /* pointers into the copies below */
	uint64_t *regs, *callchain;
	uint8_t *stack;
} Captured;

typedef struct Capture {
	Captured *samples;
	size_t n;
	ProcessMaps *maps; /* as of the first sample */
	SamplingSession *session;
} Capture;

static int capture_sample(void *userdata, const PerfSample *s, const ProcessMaps *maps,
			  Profile *profile, SampleStack *ret)
{
	Capture *c = userdata;
	Captured *k;

	*ret = (SampleStack){ .stack = PROFILE_NONE };
	if (!c->maps) {
		int r = process_maps_new(maps->pid, &c->maps);

		if (r < 0)
			return r;
		for (size_t i = 0; i < maps->n_mappings; i++) {
			r = process_maps_add(c->maps, &maps->mappings[i]);
			if (r < 0)
				return r;
		}
	}
	if (c->n >= CAPTURE_MAX) {
		sampling_session_stop(c->session);
		return 0;
	}
	k = &c->samples[c->n];
	k->sample = *s;
	k->regs = malloc(s->n_regs * sizeof(uint64_t) + 1);
	k->callchain = malloc(s->n_callchain * sizeof(uint64_t) + 1);
	k->stack = malloc(s->stack_dyn_size + 1);
	if (!k->regs || !k->callchain || !k->stack)
		return -ENOMEM;
	memcpy(k->regs, s->regs, s->n_regs * sizeof(uint64_t));
	memcpy(k->callchain, s->callchain, s->n_callchain * sizeof(uint64_t));
	memcpy(k->stack, s->stack, s->stack_dyn_size);
	k->sample.regs = k->regs;
	k->sample.callchain = k->callchain;
	k->sample.stack = k->stack;
	c->n++;
	return 0;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Resolve every captured sample once with 'resolver' into 'profile'; ns of CPU per sample. */
static double replay(const Capture *c, StackResolver *resolver, Profile *profile,
		     uint64_t *ret_truncated)
{
	uint64_t start = cpu_ns(), truncated = 0;

	for (size_t i = 0; i < c->n; i++) {
		SampleStack st;
		int r = stack_resolver_resolve(resolver, &c->samples[i].sample, c->maps, profile,
					       &st);

		harness_assert(r >= 0, "resolve: %s", strerror(-r));
		r = profile_add_sample(profile, c->samples[i].sample.tid, 0, st.stack);
		harness_assert(r >= 0, "profile_add_sample: %s", strerror(-r));
		truncated += st.truncated;
	}
	if (ret_truncated)
		*ret_truncated = truncated;
	return (double)(cpu_ns() - start) / (double)c->n;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), compare_double);
	return v[n / 2];
}

/* Files opened as profd opens them; BENCH_DEBUGINFO_PATH, if set, is the debug directory. */
static const TargetFileOpener *bench_files(void)
{
	static const char *debug_dirs[2];
	static TargetFilePolicy policy;
	static TargetFileOpener files = { target_file_open, &policy };

	debug_dirs[0] = getenv("BENCH_DEBUGINFO_PATH");
	policy.debug_dirs = debug_dirs[0] ? debug_dirs : NULL;
	return &files;
}

/* A fresh address space following the capture's maps, with an unwinder using 'method'. */
typedef struct UnwindOnly {
	AddressSpace *space;
	Unwinder *unwinder;
} UnwindOnly;

static void unwind_only_init(UnwindOnly *u, const Capture *c, SymbolCache *cache,
			     UnwindMethod method)
{
	int r = address_space_new(bench_files(), cache, 0, &u->space);

	harness_assert(r >= 0, "address_space_new: %s", strerror(-r));
	r = unwinder_new(u->space, &u->unwinder);
	harness_assert(r >= 0, "unwinder_new: %s", strerror(-r));
	unwinder_set_method(u->unwinder, method);
	r = address_space_update(u->space, c->maps);
	harness_assert(r >= 0, "address_space_update: %s", strerror(-r));
}

static void unwind_only_done(UnwindOnly *u)
{
	address_space_free(u->space);
	unwinder_free(u->unwinder);
}

/* Unwind every captured sample once; ns of CPU per sample. */
static double unwind_pass(const Capture *c, UnwindOnly *u, uint64_t *ret_frames)
{
	uint64_t pcs[STACK_RESOLVER_DEFAULT_MAX_DEPTH], start = cpu_ns(), frames = 0;

	for (size_t i = 0; i < c->n; i++) {
		bool truncated;
		int r = unwind_sample(u->unwinder, &c->samples[i].sample, pcs, ELEMENTSOF(pcs),
				      &truncated);

		harness_assert(r >= 0, "unwind_sample: %s", strerror(-r));
		frames += (uint64_t)r;
	}
	if (ret_frames)
		*ret_frames = frames;
	return (double)(cpu_ns() - start) / (double)c->n;
}

/*
 * Unwinding alone, without naming: the compiled CFI tables against libdwfl on
 * the same samples; each method cold (a new SymbolCache: tables built, or
 * libdw's CFI parsed, on first use) and then steady, rounds interleaved.
 */
static void bench_unwind_only(const Capture *c)
{
	static const char *const names[] = { "tables", "libdw" };
	double cold[2], steady[2][ROUNDS];
	UnwinderStats stats;
	uint64_t frames;

	for (int m = 0; m < 2; m++) {
		_cleanup_(symbol_cache_freep) SymbolCache *cache = NULL;
		UnwindOnly u;
		int r = symbol_cache_new(&cache);

		harness_assert(r >= 0, "symbol_cache_new: %s", strerror(-r));
		unwind_only_init(&u, c, cache, m == 0 ? UNWIND_METHOD_TABLES : UNWIND_METHOD_LIBDW);
		cold[m] = unwind_pass(c, &u, NULL);
		unwind_only_done(&u);
	}
	{
		_cleanup_(symbol_cache_freep) SymbolCache *cache = NULL;
		UnwindOnly u[2];
		int r = symbol_cache_new(&cache);

		harness_assert(r >= 0, "symbol_cache_new: %s", strerror(-r));
		for (int m = 0; m < 2; m++) {
			unwind_only_init(&u[m], c, cache,
					 m == 0 ? UNWIND_METHOD_TABLES : UNWIND_METHOD_LIBDW);
			unwind_pass(c, &u[m], NULL);
		}
		for (int i = 0; i < ROUNDS; i++)
			for (int m = 0; m < 2; m++)
				steady[m][i] = unwind_pass(c, &u[m], &frames);
		unwinder_get_stats(u[0].unwinder, &stats);
		for (int m = 0; m < 2; m++)
			unwind_only_done(&u[m]);
	}
	for (int m = 0; m < 2; m++)
		printf("unwinding alone, %s: cold %.2f us/sample, steady median %.3f us/sample\n",
		       names[m], cold[m] / 1e3, median(steady[m], ROUNDS) / 1e3);
	printf("unwinding alone: %.1f frames per sample; tables walked %.1f%% of the samples "
	       "alone; steady tables/libdw = %.3f\n",
	       (double)frames / (double)c->n,
	       100.0 * (double)stats.table_samples /
		       (double)(stats.table_samples + stats.libdw_samples),
	       median(steady[0], ROUNDS) / median(steady[1], ROUNDS));
}

/* What compiling each mapped module's CFI costs once. */
static void bench_table_build(const Capture *c)
{
	_cleanup_(symbol_cache_freep) SymbolCache *cache = NULL;
	AddressSpace *space;
	int r;

	r = symbol_cache_new(&cache);
	harness_assert(r >= 0, "symbol_cache_new: %s", strerror(-r));
	r = address_space_new(bench_files(), cache, 0, &space);
	harness_assert(r >= 0, "address_space_new: %s", strerror(-r));
	r = address_space_update(space, c->maps);
	harness_assert(r >= 0, "address_space_update: %s", strerror(-r));
	for (size_t i = 0; i < c->maps->n_mappings; i++) {
		const ProcessMapping *m = &c->maps->mappings[i];
		_cleanup_(cfi_table_freep) CfiTable *t = NULL;
		ModuleInfo *info;
		Dwfl_Module *mod;
		uint64_t start;

		if (!m->path || !(m->prot & PROT_EXEC) ||
		    !(mod = address_space_find(space, m->start, &info)))
			continue;
		start = cpu_ns();
		r = cfi_table_build(mod, &t);
		harness_assert(r >= 0, "cfi_table_build: %s", strerror(-r));
		printf("CFI table of %s: %zu ranges, %zu bytes, built in %.2f ms\n", info->path,
		       cfi_table_rows(t), cfi_table_bytes(t), (double)(cpu_ns() - start) / 1e6);
	}
	address_space_free(space);
}

/* One session's worth: a fresh resolver and profile over the capture. */
static void run_session(const Capture *c, SymbolCache *cache, double *ret_first, double *ret_steady,
			const char **ret_state, uint64_t *ret_truncated)
{
	_cleanup_(stack_resolver_freep) StackResolver *resolver = NULL;
	_cleanup_profile_ Profile *profile = NULL;
	StackResolverOptions o = { .mode = STACK_UNWIND_DWARF, .cache = cache,
				   .files = bench_files() };
	int r;

	r = stack_resolver_new(&o, &resolver);
	harness_assert(r >= 0, "stack_resolver_new: %s", strerror(-r));
	r = profile_new(&profile);
	harness_assert(r >= 0, "profile_new: %s", strerror(-r));
	*ret_first = replay(c, resolver, profile, ret_truncated);
	*ret_state = stack_resolver_cache_state(resolver);
	/* the same samples again: every location known, as in a long session */
	*ret_steady = replay(c, resolver, profile, NULL);
}

static uint64_t children_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* Run a command with output discarded; the CPU it used. */
static uint64_t run_timed(char *const argv[])
{
	uint64_t before = children_cpu_ns();
	int status;
	pid_t pid = fork();

	harness_assert(pid >= 0, "fork: %m");
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	harness_assert(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			       WEXITSTATUS(status) == 0,
		       "%s %s failed (status 0x%x)", argv[0], argv[1], status);
	return children_cpu_ns() - before;
}

static uint64_t perf_sample_count(const char *perf, const char *data)
{
	_cleanup_free_ char *cmd = NULL, *line = NULL;
	uint64_t n = 0;
	size_t size = 0;
	FILE *f;

	harness_assert(asprintf(&cmd, "'%s' report -i '%s' --stats 2>/dev/null", perf, data) > 0,
		       "oom");
	f = popen(cmd, "re");
	harness_assert(f, "perf report --stats: %m");
	while (getline(&line, &size, f) > 0)
		if (sscanf(line, " SAMPLE events: %" SCNu64, &n) == 1)
			break;
	pclose(f);
	return n;
}

static void bench_perf(const char *workload, const char *perf)
{
	char data[] = "/tmp/profd-bench-perf-XXXXXX", pid_arg[16];
	char *wargv[] = { (char *)workload, (char *)"16", (char *)"2", NULL };
	uint64_t record_ns, report_ns, n;
	pid_t pid;
	int fd, r;

	fd = mkstemp(data);
	harness_assert(fd >= 0, "mkstemp: %m");
	close(fd);
	r = harness_spawn(wargv, &pid);
	harness_assert(r >= 0, "spawn: %s", strerror(-r));
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pid);
	{
		char *argv[] = {
			(char *)perf, (char *)"record", (char *)"-q", (char *)"-F", (char *)"999",
			(char *)"--call-graph", (char *)"dwarf,16384", (char *)"-o", data,
			(char *)"-p", pid_arg, (char *)"--", (char *)"sleep", (char *)"10", NULL,
		};
		record_ns = run_timed(argv);
	}
	harness_reap(pid);
	{
		char *argv[] = {
			(char *)perf, (char *)"report", (char *)"-i", data, (char *)"--stdio", NULL,
		};
		report_ns = run_timed(argv);
	}
	n = perf_sample_count(perf, data);
	harness_assert(n > 0, "perf recorded no samples");
	printf("perf record -F 999 --call-graph dwarf,16384: %" PRIu64 " samples; CPU per sample: "
	       "record %.1f us, report %.1f us, total %.1f us\n",
	       n, record_ns / 1e3 / (double)n, report_ns / 1e3 / (double)n,
	       (record_ns + report_ns) / 1e3 / (double)n);
	unlink(data);
}

static void print_peak_rss(const char *what)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	_cleanup_free_ char *line = NULL;
	size_t size = 0;

	while (f && getline(&line, &size, f) > 0)
		if (strncmp(line, "VmHWM:", 6) == 0)
			printf("%s: peak RSS %s", what, line + 6 + strspn(line + 6, " \t"));
}

/*
 * bench-unwind --memory WORKLOAD SECONDS, in a process of its own so its
 * peak RSS is the session's: a 999 Hz, 2-thread, perf-dwarf session with
 * kernel frames, resolved as it runs.
 */
static int bench_memory(const char *workload, double seconds)
{
	char secs[32];
	char *wargv[] = { (char *)workload, secs, (char *)"2", NULL };
	HarnessRun run = { .seconds = seconds, .kernel = true };
	HarnessResult res;
	struct mallinfo2 heap;
	pid_t pid;
	int r;

	snprintf(secs, sizeof(secs), "%.1f", seconds + 1);
	r = harness_spawn(wargv, &pid);
	harness_assert(r >= 0, "spawn: %s", strerror(-r));
	r = harness_profile(pid, &run, &res);
	harness_reap(pid);
	harness_assert(r >= 0, "profile: %s", strerror(-r));
	heap = mallinfo2();
	printf("memory, %.0f s session at 999 Hz on 2 threads: %zu samples, %u stack nodes, "
	       "%u frames; heap still in use (profile) %.1f MiB\n",
	       seconds, res.profile->n_samples, res.profile->n_stacks, res.profile->n_frames,
	       (heap.uordblks + heap.hblkhd) / 1048576.0);
	print_peak_rss("memory, whole process (rings, libdw, caches, profile)");
	harness_result_done(&res);
	return 0;
}

static void run_memory_bench(const char *workload, const char *seconds)
{
	char *argv[] = { (char *)"/proc/self/exe", (char *)"--memory", (char *)workload,
			 (char *)seconds, NULL };
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	harness_assert(pid >= 0, "fork: %m");
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	harness_assert(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			       WEXITSTATUS(status) == 0,
		       "memory benchmark failed (status 0x%x)", status);
}

int main(int argc, char **argv)
{
	/* alive (stopped) until every replay is done: files are opened through it (target-files.h) */
	char *wargv[] = { argc > 1 ? argv[1] : NULL, (char *)"600", (char *)"2", NULL };
	_cleanup_(symbol_cache_freep) SymbolCache *cache = NULL;
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	Capture capture = {};
	SamplingOptions so = { .hz = 999, .duration_nanos = CAPTURE_SECONDS * 1000000000ULL,
			       .stack_bytes = 16384,
			       .exclude_kernel = true, .resolve = capture_sample,
			       .resolve_userdata = &capture };
	double cold, cold_steady, warm[ROUNDS], steady[ROUNDS], stack_kib = 0;
	const char *state;
	uint64_t truncated;
	pid_t pid;
	int r;

	if (argc == 4 && strcmp(argv[1], "--memory") == 0)
		return bench_memory(argv[2], atof(argv[3]));
	if (argc < 2) {
		fprintf(stderr, "usage: bench-unwind WORKLOAD [PERF [MEMORY_SECONDS]]\n");
		return 2;
	}
	capture.samples = calloc(CAPTURE_MAX, sizeof(Captured));
	harness_assert(capture.samples, "oom");
	r = harness_spawn(wargv, &pid);
	harness_assert(r >= 0, "spawn: %s", strerror(-r));
	r = sampling_session_new(pid, &so, &s);
	harness_assert(r >= 0, "sampling_session_new: %s", strerror(-r));
	capture.session = s;
	r = sampling_session_run(s);
	harness_assert(r >= 0 && capture.n > 0, "capture failed: %s", strerror(-r));
	kill(pid, SIGSTOP); /* its CPU is not the benchmark's */
	for (size_t i = 0; i < capture.n; i++)
		stack_kib += capture.samples[i].sample.stack_dyn_size / 1024.0;
	printf("captured %zu samples of %s (2 threads, 999 Hz, 16 KiB stacks, "
	       "%.1f KiB used on average)\n",
	       capture.n, argv[1], stack_kib / (double)capture.n);

	bench_unwind_only(&capture);
	bench_table_build(&capture);

	r = symbol_cache_new(&cache);
	harness_assert(r >= 0, "symbol_cache_new: %s", strerror(-r));
	run_session(&capture, cache, &cold, &cold_steady, &state, &truncated);
	harness_assert(strcmp(state, "cold") == 0, "first session %s", state);
	printf("cold (new SymbolCache, new resolver): %.2f us/sample over the first %zu samples "
	       "(%.0f ms in all; %" PRIu64
	       " truncated); then %.2f us/sample on the same resolver\n",
	       cold / 1e3, capture.n, cold * (double)capture.n / 1e6, truncated, cold_steady / 1e3);
	for (int i = 0; i < ROUNDS; i++) {
		double ignored;

		run_session(&capture, cache, &warm[i], &ignored, &state, &truncated);
		harness_assert(strcmp(state, "warm") == 0, "later session %s", state);
		steady[i] = ignored;
	}
	printf("warm (SymbolCache kept, new resolver + Dwfl): median %.2f us/sample of %d "
	       "sessions\n",
	       median(warm, ROUNDS) / 1e3, ROUNDS);
	printf("steady state (same resolver, locations known): median %.2f us/sample\n",
	       median(steady, ROUNDS) / 1e3);
	sampling_session_free(TAKE_PTR(s));
	harness_reap(pid);
	for (size_t i = 0; i < capture.n; i++) {
		free(capture.samples[i].regs);
		free(capture.samples[i].callchain);
		free(capture.samples[i].stack);
	}
	free(capture.samples);
	process_maps_free(capture.maps);

	if (argc > 2 && argv[2][0])
		bench_perf(argv[1], argv[2]);
	run_memory_bench(argv[1], argc > 3 ? argv[3] : "60");
	print_peak_rss("replay benchmark (holds the captured samples)");
	return 0;
}
