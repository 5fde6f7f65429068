/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-unwind SCENARIO ARGS...: profile a workload with a real sampling
 * session and the stack resolver, and check what DESIGN.md §4 promises.
 */
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "unwind-harness.h"

#define MAX_FRAMES 256


static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Root-first "a;b;c", for failure messages. */
static void print_stack(const Profile *p, uint32_t leaf)
{
	const ProfileFrame *frames[MAX_FRAMES];
	size_t n = harness_stack_frames(p, leaf, frames, MAX_FRAMES);

	fputs("  ", stderr);
	for (size_t i = n; i > 0; i--)
		fprintf(stderr, "%s%s%s", harness_frame_name(p, frames[i - 1]),
			frames[i - 1]->inlined ? "(inlined)" : "", i > 1 ? ";" : "\n");
	if (n == 0)
		fputs("(empty)\n", stderr);
}

static void profile_workload(char **argv, const HarnessRun *run, HarnessResult *res)
{
	const char *verbose;
	size_t show;
	pid_t pid;
	int r;

	r = harness_spawn(argv, &pid);
	harness_assert(r >= 0, "cannot start '%s': %s", argv[0], strerror(-r));
	r = harness_profile(pid, run, res);
	harness_reap(pid);
	harness_assert(r >= 0, "profiling '%s' failed: %s", argv[0], strerror(-r));
	fprintf(stderr,
		"%s: %zu samples, %" PRIu64 " truncated, %" PRIu64 " unwind failures, cache %s\n",
		argv[0], res->profile->n_samples, res->truncated, res->unwind_failures,
		res->cache_state);
	/* UNWIND_TEST_VERBOSE=N shows the first N stacks */
	verbose = getenv("UNWIND_TEST_VERBOSE");
	show = verbose ? strtoul(verbose, NULL, 10) : 0;
	for (size_t i = 0; i < res->profile->n_samples && i < show; i++)
		print_stack(res->profile, res->profile->samples[i].stack);
}

/* Of the samples whose self function is one of 'busy', how many reach one of 'roots'? */
static void check_reach(const Profile *p, const char *const *busy, const char *const *roots,
			double min_fraction)
{
	size_t n_busy = 0, n_reach = 0, shown = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		uint32_t leaf = p->samples[i].stack;
		bool is_busy = false, reaches = false;

		for (const char *const *b = busy; *b; b++)
			is_busy = is_busy || harness_stack_has(p, leaf, *b);
		if (!is_busy)
			continue;
		n_busy++;
		for (const char *const *r = roots; *r; r++)
			reaches = reaches || harness_stack_has(p, leaf, *r);
		if (reaches)
			n_reach++;
		else if (shown++ < 5) {
			fprintf(stderr, "stack not reaching %s:\n", roots[0]);
			print_stack(p, leaf);
		}
	}
	fprintf(stderr, "%zu of %zu busy samples reach %s\n", n_reach, n_busy, roots[0]);
	harness_assert(n_busy >= 50, "only %zu samples in %s", n_busy, busy[0]);
	harness_assert(n_reach >= min_fraction * (double)n_busy,
		       "%zu of %zu samples in %s reach %s: below %.0f%%", n_reach, n_busy, busy[0],
		       roots[0], min_fraction * 100);
}

/* The share of samples whose self function is 'name'. */
static double self_share(const Profile *p, const char *name, size_t *ret_n)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		const char *self = harness_self_function(p, p->samples[i].stack);

		if (self && strcmp(self, name) == 0)
			n++;
	}
	if (ret_n)
		*ret_n = n;
	return p->n_samples ? (double)n / (double)p->n_samples : 0;
}

static const ProfileFrame *find_frame(const Profile *p, const char *name, bool inlined)
{
	for (uint32_t i = 0; i < p->n_frames; i++)
		if (p->frames[i].inlined == inlined &&
		    strcmp(harness_frame_name(p, &p->frames[i]), name) == 0)
			return &p->frames[i];
	return NULL;
}

static size_t count_kernel_samples(const Profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		uint32_t node = p->samples[i].stack;

		if (node != PROFILE_NONE && p->frames[p->stacks[node].frame].kernel)
			n++;
	}
	return n;
}

static void check_source_line(const Profile *p, const char *function, bool inlined,
			      const char *file)
{
	const ProfileFrame *f = find_frame(p, function, inlined);
	const char *src;

	harness_assert(f, "no frame named %s", function);
	src = profile_string(p, f->file);
	harness_assert(src && ends_with(src, file) && f->line > 0, "%s has no %s:line (got %s:%u)",
		       function, file, src ?: "(none)", f->line);
}

static const char *const split_busy[] = { "split_heavy", "split_light", NULL };
static const char *const main_roots[] = { "main", "start_thread", NULL };

static int test_split(char **args)
{
	/*
	 * One thread: with more runnable threads than CPUs, preemption eats more
	 * of the long heavy phases than of the short light ones and the measured
	 * split drifts below 3:1 (perf sees the same). So one thread; threads are
	 * the late-thread test's.
	 */
	char *argv[] = { args[0], (char *)"4", (char *)"1", NULL };
	HarnessRun run = { .seconds = 3 };
	HarnessResult res;
	const ProfileFrame *mix, *heavy;
	size_t heavy_n, light_n;
	double ratio;

	profile_workload(argv, &run, &res);
	check_reach(res.profile, split_busy, main_roots, 0.95);

	self_share(res.profile, "split_heavy", &heavy_n);
	self_share(res.profile, "split_light", &light_n);
	ratio = (double)heavy_n / (double)(heavy_n + light_n);
	fprintf(stderr, "split_heavy %zu, split_light %zu: %.1f%% heavy\n", heavy_n, light_n,
		ratio * 100);
	harness_assert(ratio > 0.70 && ratio < 0.80, "split_heavy share %.1f%%, expected 75%% +- 5",
		       ratio * 100);

	/* workload_mix is always_inline: an inlined frame, called from split_*() */
	mix = find_frame(res.profile, "workload_mix", true);
	harness_assert(mix, "no inlined workload_mix frame");
	check_source_line(res.profile, "workload_mix", true, "spin.h");
	check_source_line(res.profile, "split_heavy", false, "split.c");
	heavy = find_frame(res.profile, "split_heavy", false);
	harness_assert(ends_with(profile_string(res.profile, heavy->module), "workload-split") &&
			       heavy->build_id != PROFILE_NONE,
		       "split_heavy's module is %s, build-id %s",
		       profile_string(res.profile, heavy->module),
		       profile_string(res.profile, heavy->build_id) ?: "(none)");
	for (size_t i = 0; i < res.profile->n_samples; i++) {
		uint32_t node = res.profile->samples[i].stack, up;
		const ProfileFrame *f, *parent;
		const char *name;

		/* rootward of an inlined workload_mix: the function it was inlined in */
		if (node == PROFILE_NONE ||
		    &res.profile->frames[res.profile->stacks[node].frame] != mix)
			continue;
		f = &res.profile->frames[res.profile->stacks[node].frame];
		up = res.profile->stacks[node].parent;
		parent = &res.profile->frames[res.profile->stacks[up].frame];
		name = harness_frame_name(res.profile, parent);
		harness_assert(f->inlined && !parent->inlined && strncmp(name, "split_", 6) == 0,
			       "workload_mix inlined into %s", name);
	}
	harness_assert(count_kernel_samples(res.profile) == 0, "kernel frames with kernel=false");

	/* time in clock_gettime runs in the vDSO: named from its symbols, unwound by its CFI */
	for (uint32_t i = 0; i < res.profile->n_frames; i++) {
		const ProfileFrame *f = &res.profile->frames[i];
		const char *module = profile_string(res.profile, f->module);

		if (module && strcmp(module, "[vdso]") == 0)
			harness_assert(strncmp(harness_frame_name(res.profile, f), "__vdso_", 7) == 0,
				       "vDSO frame named %s", harness_frame_name(res.profile, f));
	}
	harness_result_done(&res);
	return 0;
}

static int test_cxx(char **args)
{
	char *argv[] = { args[0], (char *)"2.5", NULL };
	HarnessRun run = { .seconds = 2 };
	static const char *const busy[] = { "demo::Grid::relax(int)", NULL };
	HarnessResult res;
	double share;

	profile_workload(argv, &run, &res);
	share = self_share(res.profile, busy[0], NULL);
	fprintf(stderr, "demo::Grid::relax(int): %.1f%% self\n", share * 100);
	harness_assert(share > 0.5, "demo::Grid::relax(int) is self in only %.1f%% of samples",
		       share * 100);
	check_reach(res.profile, busy, main_roots, 0.95);
	harness_result_done(&res);
	return 0;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	_cleanup_close_ int in = -1, out = -1;
	char buf[65536];
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -EIO;
	return n < 0 ? -errno : 0;
}

/* "xx/yyyy" of a file's GNU build-id. */
static int build_id_path(const char *file, char *ret, size_t size)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
	const unsigned char *id;
	Elf *elf;
	ssize_t n;
	size_t o;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : -1;
	if (n <= 1) {
		elf_end(elf);
		return -ENODATA;
	}
	o = (size_t)snprintf(ret, size, "%02x/", id[0]);
	for (ssize_t i = 1; i < n && o + 3 < size; i++)
		o += (size_t)snprintf(ret + o, size - o, "%02x", id[i]);
	elf_end(elf);
	return 0;
}

/*
 * A stripped binary alone in a directory, its debug info only under
 * DIR/.build-id/xx/yyyy.debug: the debug file is found by build-id. Then
 * the same file beside the binary, found through .gnu_debuglink.
 */
static int test_stripped(char **args)
{
	char tmp[] = "/tmp/profd-unwind-XXXXXX", bin[512], dbg[512], id[128], exe[600];
	char *argv[] = { exe, (char *)"3", (char *)"1", NULL };
	HarnessRun run = { .seconds = 1.5 };
	HarnessResult res;
	int r;

	harness_assert(mkdtemp(tmp), "mkdtemp: %m");
	snprintf(bin, sizeof(bin), "%s/bin", tmp);
	snprintf(dbg, sizeof(dbg), "%s/debug", tmp);
	harness_assert(mkdir(bin, 0755) == 0 && mkdir(dbg, 0755) == 0, "mkdir: %m");
	snprintf(exe, sizeof(exe), "%s/workload-split-stripped", bin);
	r = copy_file(args[0], exe, 0755);
	harness_assert(r >= 0, "copy %s: %s", args[0], strerror(-r));
	r = build_id_path(exe, id, sizeof(id));
	harness_assert(r >= 0, "no build-id in %s: %s", exe, strerror(-r));

	/* without the debug info: nothing names the static functions */
	profile_workload(argv, &run, &res);
	harness_assert(!find_frame(res.profile, "split_heavy", false),
		       "split_heavy named without debug info: is %s really stripped?", args[0]);
	harness_result_done(&res);

	{
		char dir[700], file[800];

		snprintf(dir, sizeof(dir), "%s/.build-id", dbg);
		harness_assert(mkdir(dir, 0755) == 0, "mkdir %s: %m", dir);
		snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", dbg, id);
		harness_assert(mkdir(dir, 0755) == 0, "mkdir %s: %m", dir);
		snprintf(file, sizeof(file), "%s/.build-id/%s.debug", dbg, id);
		r = copy_file(args[1], file, 0644);
		harness_assert(r >= 0, "copy %s: %s", args[1], strerror(-r));
	}
	run.resolver.debuginfo_path = dbg;
	profile_workload(argv, &run, &res);
	check_reach(res.profile, split_busy, main_roots, 0.95);
	check_source_line(res.profile, "split_heavy", false, "split.c");
	harness_assert(find_frame(res.profile, "workload_mix", true),
		       "no inlined workload_mix frame");
	harness_result_done(&res);

	/* and beside the binary under its .gnu_debuglink name, with the default path */
	{
		char file[700];

		snprintf(file, sizeof(file), "%s/%s", bin, basename_of(args[1]));
		r = copy_file(args[1], file, 0644);
		harness_assert(r >= 0, "copy %s: %s", args[1], strerror(-r));
	}
	run.resolver.debuginfo_path = NULL;
	profile_workload(argv, &run, &res);
	check_source_line(res.profile, "split_heavy", false, "split.c");
	harness_result_done(&res);

	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", tmp);
	}
	return 0;
}

/* A binary deleted while it runs (an upgrade): named through /proc/PID/map_files. */
static int test_deleted(char **args)
{
	char tmp[] = "/tmp/profd-unwind-XXXXXX", exe[600];
	char *argv[] = { exe, (char *)"3", (char *)"1", NULL };
	HarnessRun run = { .seconds = 1.5 };
	HarnessResult res;
	pid_t pid;
	int r;

	harness_assert(mkdtemp(tmp), "mkdtemp: %m");
	snprintf(exe, sizeof(exe), "%s/workload-split", tmp);
	r = copy_file(args[0], exe, 0755);
	harness_assert(r >= 0, "copy %s: %s", args[0], strerror(-r));
	r = harness_spawn(argv, &pid);
	harness_assert(r >= 0, "cannot start '%s': %s", exe, strerror(-r));
	harness_assert(unlink(exe) == 0 && rmdir(tmp) == 0, "cannot remove %s: %m", exe);
	r = harness_profile(pid, &run, &res);
	harness_reap(pid);
	harness_assert(r >= 0, "profiling failed: %s", strerror(-r));
	check_reach(res.profile, split_busy, main_roots, 0.95);
	check_source_line(res.profile, "split_heavy", false, "split.c");
	harness_result_done(&res);
	return 0;
}

static int test_jit(char **args)
{
	char *argv[] = { args[0], (char *)"2.5", NULL };
	HarnessRun run = { .seconds = 1.5 };
	HarnessResult res;
	double share;

	profile_workload(argv, &run, &res);
	share = self_share(res.profile, "jit_spin_loop", NULL);
	fprintf(stderr, "jit_spin_loop: %.1f%% self\n", share * 100);
	harness_assert(share > 0.5, "jit_spin_loop is self in only %.1f%% of samples", share * 100);
	harness_result_done(&res);
	return 0;
}

static int test_dlopen(char **args)
{
	char *argv[] = { args[0], args[1], (char *)"3.5", (char *)"1", NULL };
	static const char *const busy[] = { "plugin_hot", NULL };
	HarnessRun run = { .seconds = 3 };
	HarnessResult res;
	const ProfileFrame *f;
	double share;

	profile_workload(argv, &run, &res);
	share = self_share(res.profile, "plugin_hot", NULL);
	fprintf(stderr, "plugin_hot: %.1f%% self\n", share * 100);
	harness_assert(share > 0.3, "plugin_hot is self in only %.1f%% of samples", share * 100);
	harness_assert(self_share(res.profile, "before_plugin", NULL) > 0.1,
		       "before_plugin missing");
	f = find_frame(res.profile, "plugin_hot", false);
	harness_assert(ends_with(profile_string(res.profile, f->module), "libworkload-plugin.so"),
		       "plugin_hot in %s", profile_string(res.profile, f->module));
	check_reach(res.profile, busy, main_roots, 0.95);
	harness_result_done(&res);
	return 0;
}

static int test_kernel(char **args)
{
	char *argv[] = { args[0], (char *)"4", NULL };
	static const char *const busy[] = { "write_null", NULL };
	HarnessRun run = { .seconds = 1.5, .kernel = true };
	HarnessResult res;
	size_t n_kernel, n_named = 0;

	profile_workload(argv, &run, &res);
	n_kernel = count_kernel_samples(res.profile);
	for (uint32_t i = 0; i < res.profile->n_frames; i++) {
		const ProfileFrame *f = &res.profile->frames[i];

		if (f->kernel && strchr(harness_frame_name(res.profile, f), '+') == NULL)
			n_named++;
	}
	fprintf(stderr, "%zu of %zu samples in the kernel, %zu named kernel frames\n", n_kernel,
		res.profile->n_samples, n_named);
	/* a third: sanitizer builds of the workload spend more time in user space */
	harness_assert(n_kernel * 3 > res.profile->n_samples,
		       "only %zu of %zu samples in the kernel", n_kernel, res.profile->n_samples);
	harness_assert(n_named >= 3, "kernel frames are not named from kallsyms");
	harness_assert(find_frame(res.profile, "ksys_write", false) ||
			       find_frame(res.profile, "vfs_write", false),
		       "no ksys_write/vfs_write frame");
	/* below the kernel frames, the user stack is there too */
	check_reach(res.profile, busy, main_roots, 0.9);
	harness_result_done(&res);

	run.kernel = false;
	profile_workload(argv, &run, &res);
	harness_assert(count_kernel_samples(res.profile) == 0, "kernel frames with kernel=false");
	check_reach(res.profile, busy, main_roots, 0.9);
	harness_result_done(&res);
	return 0;
}

static int test_fp(char **args)
{
	char *argv[] = { args[0], (char *)"2.5", (char *)"1", NULL };
	HarnessRun run = { .backend = "perf-fp", .seconds = 1.5 };
	HarnessResult res;
	double share;

	profile_workload(argv, &run, &res);
	share = self_share(res.profile, "split_heavy", NULL) +
		self_share(res.profile, "split_light", NULL);
	fprintf(stderr, "perf-fp: split_* self in %.1f%%\n", share * 100);
	harness_assert(share > 0.8, "perf-fp names split_* in only %.1f%% of samples", share * 100);
	harness_result_done(&res);
	return 0;
}

static int test_cache(char **args)
{
	char *argv[] = { args[0], (char *)"1.5", (char *)"1", NULL };
	_cleanup_(symbol_cache_freep) SymbolCache *cache = NULL;
	HarnessRun run = { .seconds = 0.7 };
	HarnessResult res;
	SymbolCacheStats stats;
	int r;

	r = symbol_cache_new(&cache);
	harness_assert(r >= 0, "symbol_cache_new: %s", strerror(-r));
	run.resolver.cache = cache;
	profile_workload(argv, &run, &res);
	harness_assert(strcmp(res.cache_state, "cold") == 0, "first session: cache %s",
		       res.cache_state);
	harness_result_done(&res);
	symbol_cache_get_stats(cache, &stats);
	harness_assert(stats.locations > 0, "nothing cached");

	profile_workload(argv, &run, &res);
	harness_assert(strcmp(res.cache_state, "warm") == 0, "second session: cache %s",
		       res.cache_state);
	check_source_line(res.profile, "split_heavy", false, "split.c");
	harness_result_done(&res);

	run.resolver.cache = NULL;
	profile_workload(argv, &run, &res);
	harness_assert(strcmp(res.cache_state, "cold") == 0, "private cache: %s", res.cache_state);
	harness_result_done(&res);
	return 0;
}

static int test_late_thread(char **args)
{
	char *argv[] = { args[0], (char *)"3", (char *)"1", NULL };
	static const char *const busy[] = { "late_thread_spin", NULL };
	static const char *const roots[] = { "start_thread", NULL };
	HarnessRun run = { .seconds = 2.5 };
	HarnessResult res;

	profile_workload(argv, &run, &res);
	check_reach(res.profile, busy, roots, 0.95);
	harness_result_done(&res);
	return 0;
}

/* perf report's self share of every function whose name starts with 'name' (clones included). */
static double perf_self_share(const char *perf, const char *data, const char *name)
{
	_cleanup_free_ char *cmd = NULL, *line = NULL;
	size_t size = 0, len = strlen(name);
	double total = 0;
	FILE *f;

	harness_assert(asprintf(&cmd,
				"'%s' report -i '%s' --no-children --sort symbol -g none --stdio "
				"-q 2>/dev/null",
				perf, data) > 0,
		       "out of memory");
	f = popen(cmd, "re");
	harness_assert(f, "cannot run perf report: %m");
	while (getline(&line, &size, f) > 0) {
		double pct;
		char sym[256];

		/* "    74.89%  [.] split_heavy.constprop.0" */
		if (sscanf(line, " %lf%% [%*[^]]] %255s", &pct, sym) == 2 &&
		    strncmp(sym, name, len) == 0 && (sym[len] == '\0' || sym[len] == '.'))
			total += pct / 100;
	}
	harness_assert(pclose(f) == 0, "perf report failed");
	return total;
}

/*
 * profd and `perf record --call-graph dwarf` on the same process at the same
 * time must agree on where the time went.
 */
static int test_perf(char **args)
{
	/* outlives both windows even if perf starts slowly (it stops when its target exits) */
	char *argv[] = { args[0], (char *)"10", (char *)"2", NULL };
	char data[] = "/tmp/profd-unwind-perf-XXXXXX", pid_arg[16];
	static const char *const functions[] = { "split_heavy", "split_light", NULL };
	HarnessRun run = { .seconds = 2.5 };
	HarnessResult res;
	pid_t pid, perf;
	int status, fd, r;

	fd = mkstemp(data);
	harness_assert(fd >= 0, "mkstemp: %m");
	close(fd);
	r = harness_spawn(argv, &pid);
	harness_assert(r >= 0, "cannot start '%s': %s", argv[0], strerror(-r));
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pid);
	perf = fork();
	harness_assert(perf >= 0, "fork: %m");
	if (perf == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		dup2(null, STDOUT_FILENO);
		if (!getenv("UNWIND_TEST_VERBOSE"))
			dup2(null, STDERR_FILENO);
		execl(args[1], "perf", "record", "-q", "-F", "999", "--call-graph", "dwarf", "-o",
		      data, "-p", pid_arg, "--", "sleep", "2.5", (char *)NULL);
		_exit(127);
	}
	r = harness_profile(pid, &run, &res);
	harness_assert(waitpid(perf, &status, 0) == perf && WIFEXITED(status) &&
			       WEXITSTATUS(status) == 0,
		       "perf record failed (status %d)", status);
	harness_reap(pid);
	harness_assert(r >= 0, "profiling failed: %s", strerror(-r));

	for (const char *const *fn = functions; *fn; fn++) {
		double ours = self_share(res.profile, *fn, NULL);
		double theirs = perf_self_share(args[1], data, *fn);

		fprintf(stderr, "%-14s profd %5.1f%%  perf %5.1f%%\n", *fn, ours * 100,
			theirs * 100);
		harness_assert(ours - theirs < 0.05 && theirs - ours < 0.05,
			       "%s: profd %.1f%% and perf %.1f%% differ by more than 5 points", *fn,
			       ours * 100, theirs * 100);
	}
	harness_result_done(&res);
	unlink(data);
	return 0;
}

static size_t max_user_frames(const Profile *p)
{
	size_t most = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		const ProfileFrame *frames[MAX_FRAMES];
		size_t n = harness_stack_frames(p, p->samples[i].stack, frames, MAX_FRAMES);
		size_t user = 0;

		for (size_t j = 0; j < n; j++)
			user += !frames[j]->kernel && !frames[j]->inlined;
		if (user > most)
			most = user;
	}
	return most;
}

/* Stacks deeper than the copy, or than max_depth, are kept but flagged truncated. */
static int test_truncation(char **args)
{
	char *shallow[] = { args[0], (char *)"2.5", (char *)"8", NULL };
	char *deep[] = { args[0], (char *)"2.5", (char *)"100", NULL };
	static const char *const busy[] = { "deep_leaf", NULL };
	HarnessRun run = { .seconds = 1.2 };
	HarnessResult res;
	size_t n;

	/* 8 x 512 bytes fits in the 16 KiB copy: complete stacks */
	profile_workload(shallow, &run, &res);
	check_reach(res.profile, busy, main_roots, 0.95);
	harness_assert(res.truncated * 20 < res.profile->n_samples, "%" PRIu64 " of %zu truncated",
		       res.truncated, res.profile->n_samples);
	harness_result_done(&res);

	/* 100 x 512 bytes does not: flagged, leaf still named, never claiming to reach main */
	profile_workload(deep, &run, &res);
	n = res.profile->n_samples;
	harness_assert(res.truncated * 10 >= n * 9, "only %" PRIu64 " of %zu deep stacks truncated",
		       res.truncated, n);
	harness_assert(self_share(res.profile, "deep_leaf", NULL) > 0.8, "deep_leaf not the leaf");
	harness_assert(find_frame(res.profile, "descend", false), "no descend frames");
	harness_result_done(&res);

	/* max_depth bounds the walk */
	run.resolver.max_depth = 4;
	profile_workload(shallow, &run, &res);
	n = max_user_frames(res.profile);
	harness_assert(n <= 4, "%zu user frames with max_depth 4", n);
	harness_assert(res.truncated * 10 >= res.profile->n_samples * 9,
		       "only %" PRIu64 " of %zu samples truncated at max_depth 4", res.truncated,
		       res.profile->n_samples);
	harness_result_done(&res);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int n_args;
		int (*run)(char **args);
	} tests[] = {
		{ "split", 1, test_split },       { "cxx", 1, test_cxx },
		{ "stripped", 2, test_stripped }, { "jit", 1, test_jit },
		{ "deleted", 1, test_deleted },   { "truncation", 1, test_truncation },
		{ "dlopen", 2, test_dlopen },     { "kernel", 1, test_kernel },
		{ "fp", 1, test_fp },             { "cache", 1, test_cache },
		{ "late-thread", 1, test_late_thread }, { "perf", 2, test_perf },
	};

	for (size_t i = 0; argc > 1 && i < ELEMENTSOF(tests); i++)
		if (strcmp(argv[1], tests[i].name) == 0) {
			if (argc != 2 + tests[i].n_args) {
				fprintf(stderr, "test-unwind %s: %d arguments expected\n", argv[1],
					tests[i].n_args);
				return 2;
			}
			return tests[i].run(argv + 2);
		}
	fprintf(stderr, "usage: test-unwind SCENARIO ARGS...\n");
	return 2;
}
