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
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "hybrid-unwind.h"
#include "plt-names.h"
#include "stack-quality.h"
#include "time-util.h"
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

static bool quality_listed(const json_t *report, const char *module);

static int test_split(char **args)
{
	/*
	 * The workload's phases are fixed amounts of work, 3:1, so the split of
	 * the samples is 3:1 however the machine's load preempts them. One
	 * thread; threads are the late-thread test's. 3 s of its CPU time, as an
	 * idle machine gives a 3 s window: ~3000 samples however loaded the
	 * machine, so 5 points are 6 standard errors of the split; 120 s a hang
	 * guard.
	 */
	char *argv[] = { args[0], (char *)"300", (char *)"1", NULL };
	HarnessRun run = { .seconds = 120, .cpu_seconds = 3 };
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
	harness_assert(ends_with(profile_string(res.profile, heavy->module), basename_of(args[0])) &&
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

	/*
	 * Time in clock_gettime runs in the vDSO: named from its symbols, unwound by its
	 * CFI. Newer kernels' vDSO calls a local clock reader no symbol names (perf shows
	 * its address too): such a frame keeps its address and must have been reached
	 * from an exported __vdso_ function, through the vDSO's CFI.
	 */
	for (uint32_t i = 0; i < res.profile->n_stacks; i++) {
		const ProfileFrame *f = &res.profile->frames[res.profile->stacks[i].frame];
		const char *module = profile_string(res.profile, f->module);
		const char *name = harness_frame_name(res.profile, f), *caller;
		uint32_t up = res.profile->stacks[i].parent;

		if (!module || strcmp(module, "[vdso]") != 0 || strncmp(name, "__vdso_", 7) == 0)
			continue;
		caller = up == PROFILE_NONE
				 ? "(none)"
				 : harness_frame_name(res.profile,
						      &res.profile->frames[res.profile->stacks[up].frame]);
		harness_assert(strncmp(name, "[vdso]+0x", 9) == 0 && strncmp(caller, "__vdso_", 7) == 0,
			       "vDSO frame named %s, called from %s", name, caller);
	}
	/* ... and not a defect the stack-quality report would send anyone to fix */
	harness_assert(!quality_listed(res.quality, "[vdso]"),
		       "the stack-quality report lists the vDSO");
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

/* What a workload maps between the session's creation and its start (GO_FILE workloads). */
typedef struct LateMappings {
	const char *go_file, *perms, *path;
	unsigned count;
} LateMappings;

static void map_before_start(pid_t pid, void *userdata)
{
	const LateMappings *l = userdata;

	harness_go_and_wait_for_mappings(pid, l->go_file, l->perms, l->path, l->count);
}

/*
 * A non-PIE executable running code from a second mapping of its own text, as
 * node runs V8's builtins: named from the file's DWARF through the module of
 * its own load, not left as module+offset. "remap-before-start": the copy is
 * mapped after the session was created and before it started (the events are
 * still disabled then: no MMAP2 record tells of it).
 */
static int remap_scenario(char **args, bool before_start)
{
	char tmp[] = "/tmp/profd-unwind-XXXXXX", go[64];
	char *argv[] = { args[0], (char *)"2.5", before_start ? go : NULL, NULL };
	LateMappings late = { .go_file = go, .perms = "r-xp", .path = basename_of(args[0]),
			      .count = 2 };
	HarnessRun run = { .seconds = 1.5 };
	HarnessResult res;
	size_t with_line = 0;
	double share;

	harness_assert(mkdtemp(tmp), "mkdtemp: %m");
	snprintf(go, sizeof(go), "%s/go", tmp);
	if (before_start) {
		run.before_start = map_before_start;
		run.before_start_userdata = &late;
	}
	profile_workload(argv, &run, &res);
	share = self_share(res.profile, "remap_hot", NULL);
	fprintf(stderr, "remap_hot: %.1f%% self\n", share * 100);
	harness_assert(share > 0.8, "remap_hot is self in only %.1f%% of samples", share * 100);
	for (uint32_t i = 0; i < res.profile->n_frames; i++) {
		const ProfileFrame *f = &res.profile->frames[i];
		const char *file = profile_string(res.profile, f->file);

		if (strcmp(harness_frame_name(res.profile, f), "remap_hot") != 0)
			continue;
		harness_assert(ends_with(profile_string(res.profile, f->module), basename_of(args[0])),
			       "remap_hot's module is %s", profile_string(res.profile, f->module));
		/* clang gives some instructions line 0: one frame with a line is enough */
		with_line += file && ends_with(file, "remap.c") && f->line > 0;
	}
	harness_assert(with_line > 0, "remap_hot has no remap.c:line");
	harness_result_done(&res);
	(void)unlink(go);
	harness_assert(rmdir(tmp) >= 0, "cannot remove %s: %m", tmp);
	return 0;
}

static int test_remap(char **args)
{
	return remap_scenario(args, false);
}

static int test_remap_before_start(char **args)
{
	return remap_scenario(args, true);
}

/*
 * C++ exceptions: samples taken while libgcc unwinds a throw (under
 * __cxa_throw and _Unwind_RaiseException) walk back through those
 * libraries' CFI to main like the rest. The throws are ~12% of the
 * workload's time, so the window is 1.5 s of its CPU time (~1500 samples,
 * ~180 of them raising, at any load; 60 s a hang guard): a wall-clock window
 * on a loaded machine gave 45.
 */
static int test_cxx_throw(char **args)
{
	char *argv[] = { args[0], (char *)"300", NULL };
	static const char *const busy[] = { "throw_hot(unsigned long)", NULL };
	static const char *const raising[] = { "_Unwind_RaiseException", NULL };
	HarnessRun run = { .seconds = 60, .cpu_seconds = 1.5 };
	HarnessResult res;

	profile_workload(argv, &run, &res);
	check_reach(res.profile, busy, main_roots, 0.95);
	/* the throws themselves: named, and just as complete */
	check_reach(res.profile, raising, main_roots, 0.95);
	harness_result_done(&res);
	return 0;
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
	const char *debug_dirs[] = { NULL, NULL };
	TargetFilePolicy policy = { .debug_dirs = debug_dirs };
	TargetFileOpener opener = { target_file_open, &policy };
	HarnessRun run = { .seconds = 1.5 };
	HarnessResult res;
	int r;

	harness_assert(mkdtemp(tmp), "mkdtemp: %m");
	snprintf(bin, sizeof(bin), "%s/bin", tmp);
	snprintf(dbg, sizeof(dbg), "%s/debug", tmp);
	harness_assert(mkdir(bin, 0755) == 0 && mkdir(dbg, 0755) == 0, "mkdir: %m");
	snprintf(exe, sizeof(exe), "%s/workload-split-stripped", bin);
	r = harness_copy_file(args[0], exe, 0755);
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
		r = harness_copy_file(args[1], file, 0644);
		harness_assert(r >= 0, "copy %s: %s", args[1], strerror(-r));
	}
	debug_dirs[0] = dbg;
	run.resolver.files = &opener;
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
		r = harness_copy_file(args[1], file, 0644);
		harness_assert(r >= 0, "copy %s: %s", args[1], strerror(-r));
	}
	run.resolver.files = NULL;
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

/*
 * A binary deleted while it runs, or replaced by another file renamed over it
 * (both are package upgrades): still named from the file that runs, which
 * only /proc/PID/map_files leads to.
 */
static int test_changed_on_disk(char **args)
{
	char tmp[] = "/tmp/profd-unwind-XXXXXX", exe[600], next[600];
	char *argv[] = { exe, (char *)"3", (char *)"1", NULL };
	const char *replacement = args[1];
	HarnessRun run = { .seconds = 1.5 };
	HarnessResult res;
	pid_t pid;
	int r;

	harness_assert(mkdtemp(tmp), "mkdtemp: %m");
	snprintf(exe, sizeof(exe), "%s/workload-split", tmp);
	snprintf(next, sizeof(next), "%s/workload-split.new", tmp);
	r = harness_copy_file(args[0], exe, 0755);
	harness_assert(r >= 0, "copy %s: %s", args[0], strerror(-r));
	r = harness_spawn(argv, &pid);
	harness_assert(r >= 0, "cannot start '%s': %s", exe, strerror(-r));
	if (replacement) {
		r = harness_copy_file(replacement, next, 0755);
		harness_assert(r >= 0 && rename(next, exe) == 0, "cannot replace %s: %m", exe);
	}
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

/*
 * A JIT emitting code while it is profiled, each page mapped on one CPU and
 * run on another: every sample in it named from the perf map, none left
 * unnamed because its MMAP2 record sat in the other CPU's ring.
 */
static int test_jit_late(char **args)
{
	char *argv[] = { args[0], (char *)"2.5", NULL };
	HarnessRun run = { .seconds = 1.5 };
	HarnessResult res;
	size_t n, unnamed = 0;
	double share;

	profile_workload(argv, &run, &res);
	share = self_share(res.profile, "jit_late_loop", &n);
	for (size_t i = 0; i < res.profile->n_samples; i++) {
		uint32_t node = res.profile->samples[i].stack;

		unnamed += node != PROFILE_NONE &&
			   strncmp(harness_frame_name(res.profile,
						      &res.profile->frames[res.profile->stacks[node].frame]),
				   "[unknown]", 9) == 0;
	}
	fprintf(stderr, "jit_late_loop: %.1f%% self (%zu samples), %zu unnamed\n", share * 100, n,
		unnamed);
	harness_assert(n >= 50, "only %zu samples in jit_late_loop", n);
	harness_assert(share > 0.9, "jit_late_loop is self in only %.1f%% of samples", share * 100);
	harness_assert(unnamed * 50 < res.profile->n_samples, "%zu of %zu samples unnamed", unnamed,
		       res.profile->n_samples);
	harness_result_done(&res);
	return 0;
}

/* Samples whose leaf frame is named 'name': how many, and the first and last time. */
static size_t leaf_times(const Profile *p, const char *name, uint64_t *ret_first,
			 uint64_t *ret_last, uint64_t *ret_addresses, size_t max_addresses,
			 size_t *ret_n_addresses)
{
	size_t n = 0, n_addresses = 0;

	*ret_first = UINT64_MAX;
	*ret_last = 0;
	for (size_t i = 0; i < p->n_samples; i++) {
		uint32_t node = p->samples[i].stack;
		const ProfileFrame *f;
		size_t j;

		if (node == PROFILE_NONE)
			continue;
		f = &p->frames[p->stacks[node].frame];
		if (strcmp(harness_frame_name(p, f), name) != 0)
			continue;
		n++;
		if (p->samples[i].time_ns < *ret_first)
			*ret_first = p->samples[i].time_ns;
		if (p->samples[i].time_ns > *ret_last)
			*ret_last = p->samples[i].time_ns;
		for (j = 0; j < n_addresses && ret_addresses[j] != (f->address & ~4095ULL); j++)
			;
		if (j == n_addresses && n_addresses < max_addresses)
			ret_addresses[n_addresses++] = f->address & ~4095ULL;
	}
	*ret_n_addresses = n_addresses;
	return n;
}

/*
 * A JIT announcing code in a jitdump file, reusing an address for other code
 * and moving code: each phase named by what ran there at the sample's time.
 * "jitdump-before-start": the file and the code are mapped after the session
 * was created and before it started.
 */
static int jitdump_scenario(char **args, bool before_start)
{
	char tmp[] = "/tmp/profd-unwind-XXXXXX", go[64];
	char *argv[] = { args[0], tmp, (char *)"3.6", before_start ? go : NULL, NULL };
	LateMappings late = { .go_file = go, .perms = "rwxp", .count = 1 };
	HarnessRun run = { .seconds = 3.3 };
	HarnessResult res;
	uint64_t first_at[2], last_at[2], pages[2][4];
	size_t n[2], n_pages[2], unnamed = 0;

	harness_assert(mkdtemp(tmp), "mkdtemp: %m");
	snprintf(go, sizeof(go), "%s/go", tmp);
	if (before_start) {
		run.before_start = map_before_start;
		run.before_start_userdata = &late;
	}
	profile_workload(argv, &run, &res);
	n[0] = leaf_times(res.profile, "jit_first", &first_at[0], &last_at[0], pages[0], 4,
			  &n_pages[0]);
	n[1] = leaf_times(res.profile, "jit_second", &first_at[1], &last_at[1], pages[1], 4,
			  &n_pages[1]);
	for (size_t i = 0; i < res.profile->n_samples; i++) {
		uint32_t node = res.profile->samples[i].stack;

		unnamed += node != PROFILE_NONE &&
			   strncmp(harness_frame_name(res.profile,
						      &res.profile->frames[res.profile->stacks[node].frame]),
				   "[unknown]", 9) == 0;
	}
	fprintf(stderr, "jit_first %zu samples (%zu pages), jit_second %zu (%zu pages), %zu unnamed\n",
		n[0], n_pages[0], n[1], n_pages[1], unnamed);
	harness_assert(n[0] * 8 > res.profile->n_samples && n[1] * 8 > res.profile->n_samples,
		       "phases missing: jit_first %zu, jit_second %zu of %zu samples", n[0], n[1],
		       res.profile->n_samples);
	/* the reused address: named jit_first before the reuse, jit_second after, never mixed */
	harness_assert(last_at[0] < first_at[1],
		       "jit_first seen at %" PRIu64 " ns, after jit_second at %" PRIu64 " ns",
		       last_at[0], first_at[1]);
	/* jit_second at its first place and, after the move, at the next page */
	harness_assert(n_pages[1] == 2, "jit_second seen on %zu pages, expected 2 (moved)",
		       n_pages[1]);
	harness_assert(unnamed * 20 < res.profile->n_samples, "%zu of %zu samples unnamed", unnamed,
		       res.profile->n_samples);
	harness_result_done(&res);
	harness_assert(harness_remove_dir(tmp) >= 0, "cannot remove %s: %m", tmp);
	return 0;
}

static int test_jitdump(char **args)
{
	return jitdump_scenario(args, false);
}

static int test_jitdump_before_start(char **args)
{
	return jitdump_scenario(args, true);
}

/* Leaf samples in 'module' (its basename), and of those, how many 'name' is the leaf of. */
static void leaf_counts(const Profile *p, const char *module, const char *name, size_t *ret_in_module,
			size_t *ret_named, size_t *ret_unnamed)
{
	size_t n = 0, named = 0, unnamed = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		uint32_t node = p->samples[i].stack;
		const ProfileFrame *f;
		const char *m, *fn;

		if (node == PROFILE_NONE)
			continue;
		/* the function itself, not what it inlined */
		while (p->frames[p->stacks[node].frame].inlined && p->stacks[node].parent != PROFILE_NONE)
			node = p->stacks[node].parent;
		f = &p->frames[p->stacks[node].frame];
		m = profile_string(p, f->module);
		if (!m || strcmp(basename_of(m), module) != 0)
			continue;
		fn = harness_frame_name(p, f);
		n++;
		named += strcmp(fn, name) == 0;
		unnamed += strncmp(fn, module, strlen(module)) == 0 && strstr(fn, "+0x");
	}
	*ret_in_module = n;
	*ret_named = named;
	*ret_unnamed = unnamed;
}

/* Where binutils' objdump says the PLT entry of 'function' is in 'file' (0: nowhere). */
static uint64_t objdump_plt_entry(const char *file, const char *function)
{
	_cleanup_free_ char *cmd = NULL, *want = NULL;
	char line[512];
	uint64_t addr = 0, a;
	FILE *f;

	harness_assert(asprintf(&cmd, "objdump -d -j .plt -j .plt.sec '%s'", file) > 0 &&
			       asprintf(&want, "<%s@plt>:", function) > 0,
		       "out of memory");
	f = popen(cmd, "re");
	harness_assert(f, "cannot run objdump: %m");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want) && sscanf(line, "%" SCNx64, &a) == 1)
			addr = a;
	harness_assert(pclose(f) == 0, "objdump -d %s failed", file);
	return addr;
}

/* plt_entry_function() against objdump: the entry's first and last byte, not the one before. */
static void check_plt_entry(const char *file, const char *function)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
	uint64_t addr = objdump_plt_entry(file, function);
	const char *at[2];
	Elf *elf;

	harness_assert(fd >= 0 && addr > 0, "%s: no %s@plt (objdump)", file, function);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	harness_assert(elf, "%s: not ELF", file);
	at[0] = plt_entry_function(elf, addr);
	at[1] = plt_entry_function(elf, addr + 15);
	harness_assert(at[0] && strcmp(at[0], function) == 0 && at[1] && strcmp(at[1], function) == 0,
		       "%s: the PLT entry at 0x%" PRIx64 " is %s, its last byte %s", file, addr,
		       at[0] ?: "nothing", at[1] ?: "nothing");
	at[0] = plt_entry_function(elf, addr - 1);
	harness_assert(!at[0] || strcmp(at[0], function) != 0, "%s: 0x%" PRIx64 " is %s too",
		       file, addr - 1, at[0]);
	elf_end(elf);
}

/*
 * The naming chain on one library at three levels of stripping: DWARF (names
 * and lines), .symtab (names of static functions too), .dynsym (exported
 * names; a static function is module+offset). At every level the PLT stub
 * the library calls its exported function through is named as perf names it
 * (chain_exported@plt; where objdump says it is, and in the profile: no leaf
 * is module+offset where names exist). JIT maps, the next level, are
 * unwind-jit's and unwind-jitdump's.
 */
static int test_naming_chain(char **args)
{
	static const char *const levels[] = { "dwarf", "symtab", "dynsym" };

	for (size_t level = 0; level < 3; level++) {
		char *argv[] = { args[0], args[1 + level], (char *)"2.5", (char *)"0", NULL };
		const char *module = basename_of(args[1 + level]);
		HarnessRun run = { .seconds = 1.5 };
		HarnessResult res;
		const ProfileFrame *st;
		size_t n, plt, unnamed, n_static, hot, exported;

		check_plt_entry(args[1 + level], "chain_exported");
		profile_workload(argv, &run, &res);
		leaf_counts(res.profile, module, "chain_exported@plt", &n, &plt, &unnamed);
		leaf_counts(res.profile, module, "chain_static", &n, &n_static, &unnamed);
		leaf_counts(res.profile, module, "chain_exported", &n, &exported, &unnamed);
		leaf_counts(res.profile, module, "plugin_hot", &n, &hot, &unnamed);
		fprintf(stderr, "%s: %zu leaves in %s: chain_static %zu, chain_exported %zu, "
				"plugin_hot %zu, chain_exported@plt %zu, module+offset %zu\n",
			levels[level], n, module, n_static, exported, hot, plt, unnamed);
		harness_assert(n >= 100, "%s: only %zu samples in %s", levels[level], n, module);
		/*
		 * exported functions: named at every level. How the 256 calls'
		 * time splits between the caller's loop, the PLT stub and the
		 * callee depends on the CPU (on this host the callee 7-27% of
		 * the library's leaves, its stub 19-45%, plugin_hot 0-4%), so
		 * the callee is counted against its own call (stub and callee),
		 * with room for that spread: its name lost, or given to the
		 * stub, takes its count to about 0.
		 */
		harness_assert(exported >= 5 && exported * 20 >= exported + plt,
			       "%s: chain_exported is the leaf of %zu of %zu, chain_exported@plt of %zu",
			       levels[level], exported, n, plt);
		st = find_frame(res.profile, "chain_static", false);
		if (level < 2) {
			/* every address named: static functions, exported ones, the PLT */
			harness_assert(unnamed == 0 && n_static * 10 >= n,
				       "%s: chain_static %zu, module+offset %zu of %zu", levels[level],
				       n_static, unnamed, n);
			/* lines come from DWARF only */
			harness_assert((level == 0) == (st->line > 0 && profile_string(res.profile,
										       st->file)),
				       "%s: chain_static at line %u", levels[level], st->line);
		} else
			harness_assert(!st && unnamed * 10 >= n,
				       "dynsym: chain_static named, module+offset in %zu of %zu",
				       unnamed, n);
		harness_result_done(&res);
	}
	return 0;
}

static int test_dlopen(char **args)
{
	char *argv[] = { args[0], args[1], (char *)"3.5", (char *)"1", NULL };
	static const char *const busy[] = { "plugin_hot", NULL };
	HarnessRun run = { .seconds = 3 };
	HarnessResult res;
	const ProfileFrame *f;
	uint64_t dlopened = UINT64_MAX;
	size_t n_phase[2] = {}, n_own[2] = {};

	profile_workload(argv, &run, &res);
	/*
	 * The workload's two phases in the order its samples were taken (how much
	 * CPU time each phase got is the machine's business): before the dlopen,
	 * before_plugin is self; from the first plugin_hot sample on, plugin_hot
	 * is, named from the library mapped mid-session. The clock reads in the
	 * vDSO are the rest of either phase.
	 */
	for (size_t i = 0; i < res.profile->n_samples; i++) {
		const ProfileSample *sm = &res.profile->samples[i];
		const char *self = harness_self_function(res.profile, sm->stack);

		if (self && strcmp(self, "plugin_hot") == 0 && sm->time_ns < dlopened)
			dlopened = sm->time_ns;
	}
	harness_assert(dlopened != UINT64_MAX, "no sample in plugin_hot");
	for (size_t i = 0; i < res.profile->n_samples; i++) {
		const ProfileSample *sm = &res.profile->samples[i];
		const char *self = harness_self_function(res.profile, sm->stack) ?: "";
		bool after = sm->time_ns >= dlopened;

		n_phase[after]++;
		n_own[after] += strcmp(self, after ? "plugin_hot" : "before_plugin") == 0;
		harness_assert(!after || strcmp(self, "before_plugin") != 0,
			       "before_plugin sampled after plugin_hot was");
	}
	fprintf(stderr, "before the dlopen: %zu of %zu samples in before_plugin; "
			"after: %zu of %zu in plugin_hot\n",
		n_own[0], n_phase[0], n_own[1], n_phase[1]);
	harness_assert(n_phase[0] >= 20 && n_phase[1] >= 20,
		       "the session did not see both phases: %zu samples before the dlopen, %zu after",
		       n_phase[0], n_phase[1]);
	harness_assert(n_own[0] * 5 >= n_phase[0] * 4, "before_plugin is self in only %zu of %zu "
		       "samples before the dlopen", n_own[0], n_phase[0]);
	harness_assert(n_own[1] * 5 >= n_phase[1] * 4, "plugin_hot is self in only %zu of %zu "
		       "samples after the dlopen", n_own[1], n_phase[1]);
	f = find_frame(res.profile, "plugin_hot", false);
	harness_assert(ends_with(profile_string(res.profile, f->module), "libworkload-plugin.so"),
		       "plugin_hot in %s", profile_string(res.profile, f->module));
	check_reach(res.profile, busy, main_roots, 0.95);
	harness_result_done(&res);
	return 0;
}

/*
 * How far apart two measurements of one share may be by chance: 3 standard
 * errors of the difference of two independent samplings (n_a and n_b draws of
 * the same process), plus 2 points for what the two samplers see differently.
 */
static double share_tolerance(double share, double n_a, double n_b)
{
	return 0.02 + 3 * sqrt(share * (1 - share) * (1 / n_a + 1 / n_b));
}

static int test_kernel(char **args)
{
	/* outlives the windows however long a loaded machine takes to give it its CPU time */
	char *argv[] = { args[0], (char *)"300", NULL };
	static const char *const busy[] = { "write_null", NULL };
	/* 3 s of the target's CPU time, as an idle machine gives a 3 s window: ~3000 samples and ~300
	 * of the kernel's ticks however loaded the machine (the tolerance follows them); 120 s a hang
	 * guard */
	HarnessRun run = { .seconds = 120, .cpu_seconds = 3, .kernel = true };
	HarnessResult res;
	size_t n_kernel, n_named = 0;
	double cpu, kernel_share, system_share, tolerance;

	profile_workload(argv, &run, &res);
	n_kernel = count_kernel_samples(res.profile);
	for (uint32_t i = 0; i < res.profile->n_frames; i++) {
		const ProfileFrame *f = &res.profile->frames[i];

		if (f->kernel && strchr(harness_frame_name(res.profile, f), '+') == NULL)
			n_named++;
	}
	fprintf(stderr, "%zu of %zu samples in the kernel, %zu named kernel frames\n", n_kernel,
		res.profile->n_samples, n_named);
	/*
	 * The kernel's own accounting of the target over the same window says
	 * which share of its CPU time was system time: the samples with kernel
	 * frames must have that share. The share itself is the build's and the
	 * machine's (sanitizers slow the user side: 37% instead of 62%), the
	 * agreement is profd's. The kernel splits user and system time by its
	 * ticks, at least 100 a second: an independent sampling of the same time.
	 */
	harness_assert(res.cpu_known, "the workload exited before the window ended");
	cpu = (double)(res.cpu.user_nanos + res.cpu.system_nanos);
	harness_assert(cpu >= 0.2e9 && res.profile->n_samples >= 100,
		       "the workload got %.2f s of CPU time in the window, %zu samples", cpu / 1e9,
		       res.profile->n_samples);
	system_share = (double)res.cpu.system_nanos / cpu;
	kernel_share = (double)n_kernel / (double)res.profile->n_samples;
	tolerance = share_tolerance(system_share, cpu / 1e7, (double)res.profile->n_samples);
	fprintf(stderr, "kernel: %.1f%% of samples, %.1f%% of the CPU time was system time (+- %.1f)\n",
		kernel_share * 100, system_share * 100, tolerance * 100);
	harness_assert(system_share >= 0.15,
		       "the workload spent only %.1f%% of its CPU time in the kernel",
		       system_share * 100);
	harness_assert(fabs(kernel_share - system_share) <= tolerance,
		       "%zu of %zu samples in the kernel (%.1f%%), but the kernel accounted %.1f%% "
		       "of the workload's CPU time as system time (+- %.1f allowed)",
		       n_kernel, res.profile->n_samples, kernel_share * 100, system_share * 100,
		       tolerance * 100);
	harness_assert(n_named >= 3, "kernel frames are not named from kallsyms");
	harness_assert(find_frame(res.profile, "ksys_write", false) ||
			       find_frame(res.profile, "vfs_write", false),
		       "no ksys_write/vfs_write frame");
	/* below the kernel frames, the user stack is there too */
	check_reach(res.profile, busy, main_roots, 0.9);
	harness_result_done(&res);

	run = (HarnessRun){ .seconds = 1.5 };
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

/*
 * perf report's self share of every function whose name starts with 'name'
 * (clones included), among the samples perf took in 'window' ("START,END" in
 * seconds of its clock).
 */
static double perf_self_share(const char *perf, const char *data, const char *window,
			      const char *name)
{
	_cleanup_free_ char *cmd = NULL, *line = NULL;
	size_t size = 0, len = strlen(name);
	double total = 0;
	FILE *f;

	harness_assert(asprintf(&cmd,
				"'%s' report -i '%s' --time '%s' --no-children --sort symbol -g none "
				"--stdio -q 2>/dev/null",
				perf, data, window) > 0,
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

/* The span from the profile's first sample to its last, as perf report's --time takes it. */
static void sample_window(const Profile *p, uint64_t start_mono, char *buf, size_t size)
{
	const uint64_t second = NSEC_PER_SEC;
	uint64_t first = UINT64_MAX, last = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		uint64_t t = p->samples[i].time_ns;

		first = t < first ? t : first;
		last = t > last ? t : last;
	}
	first += start_mono;
	last += start_mono;
	snprintf(buf, size, "%" PRIu64 ".%09" PRIu64 ",%" PRIu64 ".%09" PRIu64,
		 first / second, first % second, last / second, last % second);
}

/* Has perf written 'bytes' to its data file (its events on, samples arriving)? */
typedef struct PerfWritten {
	const char *data;
	off_t bytes;
	pid_t perf;
} PerfWritten;

static bool perf_written(void *userdata)
{
	const PerfWritten *w = userdata;
	struct stat st;

	/* perf gone: stop waiting, its status says why */
	return waitpid(w->perf, NULL, WNOHANG | WNOWAIT) != 0 ||
	       (stat(w->data, &st) == 0 && st.st_size >= w->bytes);
}

/*
 * profd and `perf record --call-graph dwarf` on the same process at the same
 * time must agree on where the time went: split_heavy's and split_light's
 * self shares within 5 points. Both sample on CLOCK_MONOTONIC, perf user mode
 * only (profd's harness takes no kernel stacks but keeps a tick that lands in
 * the kernel under its user stack: 0.3% of workload-split's, which makes no
 * system calls), and perf's samples count only from profd's first sample to
 * its last: perf runs before and after profd's window, and on a loaded
 * machine what the target did outside it need not be what it did inside. The
 * window is 2 s of the target's CPU time, ~2000 samples each however loaded
 * the machine: a 5-point difference is then 3.6 standard errors of two
 * independent samplings of a 3:1 split, not chance. Independent only with
 * workload-split's rounds of varied length: both sample every 1.001 ms, and
 * rounds of one length (~4-5 ms) can lock in phase with that on an idle
 * machine, each sampler then seeing every round at its own few points (profd
 * 69.9% against perf 75.1% in a CI run). A profd that loses the stack of 1 in
 * 10 samples fails it.
 */
static int test_perf(char **args)
{
	/* outlives both windows however long a loaded machine takes to give them its CPU time */
	char *argv[] = { args[0], (char *)"300", (char *)"2", NULL };
	char data[] = "/tmp/profd-unwind-perf-XXXXXX", pid_arg[16], window[64];
	static const char *const functions[] = { "split_heavy", "split_light", NULL };
	HarnessRun run = { .seconds = 100, .cpu_seconds = 2 };
	HarnessResult res;
	PerfWritten written;
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
		/* until SIGINT, which ends it once profd's window is over */
		execl(args[1], "perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "--all-user", "-F",
		      "999", "--call-graph", "dwarf", "-o", data, "-p", pid_arg, (char *)NULL);
		_exit(127);
	}
	/* perf writes its samples in pieces of half its ring: 512 KiB written, it samples */
	written = (PerfWritten){ .data = data, .bytes = 512 * 1024, .perf = perf };
	harness_assert(test_wait_until(60, perf_written, &written), "perf record never sampled");
	r = harness_profile(pid, &run, &res);
	kill(perf, SIGINT);
	/* perf record re-raises the SIGINT it ended on, once its data is written */
	harness_assert(waitpid(perf, &status, 0) == perf &&
			       ((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
				(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)),
		       "perf record failed (status %d)", status);
	harness_reap(pid);
	harness_assert(r >= 0, "profiling failed: %s", strerror(-r));
	sample_window(res.profile, res.start_mono, window, sizeof(window));
	fprintf(stderr,
		"profd: %zu samples (%" PRIu64 " unwind failures, %" PRIu64
		" dropped) in %.2f s of the target's CPU time, %s\n",
		res.profile->n_samples, res.unwind_failures, res.dropped,
		(double)(res.cpu.user_nanos + res.cpu.system_nanos) / 1e9, window);
	harness_assert(res.profile->n_samples >= 1000,
		       "only %zu samples of 2 s of the target's CPU time at 999 Hz",
		       res.profile->n_samples);

	for (const char *const *fn = functions; *fn; fn++) {
		double ours = self_share(res.profile, *fn, NULL);
		double theirs = perf_self_share(args[1], data, window, *fn);

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

static const json_t *quality_reason(const json_t *report, const char *module, const char *reason);

/*
 * Hybrid unwinding: a frame-pointer build recursing deeper than a 2 KiB stack
 * copy. The DWARF walk ends where the copy does; the kernel's frame-pointer
 * callchain of the same sample carries the stack on to main, and the
 * resolver says so.
 */
static int test_hybrid(char **args)
{
	char *argv[] = { args[0], (char *)"2.5", (char *)"60", NULL };
	static const char *const busy[] = { "deep_leaf", NULL };
	HarnessRun run = { .seconds = 1.2, .stack_bytes = 2048 };
	HarnessResult res;
	const StackResolverStats *st;

	profile_workload(argv, &run, &res);
	st = &res.resolver_stats;
	fprintf(stderr, "%" PRIu64 " walks ended at the stack copy, %" PRIu64 " continued (%" PRIu64
		" to the callchain's end)\n",
		st->ends[UNWIND_END_STACK_COPY], st->hybrid, st->hybrid_complete);
	check_reach(res.profile, busy, main_roots, 0.9);
	harness_assert(st->hybrid * 10 >= res.profile->n_samples * 9,
		       "only %" PRIu64 " of %zu samples continued with the callchain", st->hybrid,
		       res.profile->n_samples);
	/* the callchain finished the stacks: the report knows what copy would have held them */
	{
		const json_t *why = quality_reason(res.quality, "deep-stack-fp", "stack-copy");
		const char *hint = why ? json_string_value(json_object_get(why, "hint")) : NULL;
		const char *n = hint ? strstr(hint, "--stack-bytes ") : NULL;
		unsigned long bytes = n ? strtoul(n + 14, NULL, 10) : 0;

		fprintf(stderr, "stack-copy hint: %s\n", hint ?: "(none)");
		/* 60 frames of 512 bytes */
		harness_assert(bytes >= 60 * 512 && bytes <= 65528 && strstr(hint, "would have held"),
			       "no fitting --stack-bytes suggested: %s", hint ?: "(none)");
	}
	/* stacks the callchain finished are fine: nothing to tell a person */
	harness_assert(stack_quality_print(res.quality, stderr) == 0,
		       "a report printed for stacks the callchain finished");
	harness_result_done(&res);
	return 0;
}

/* The reason the quality report gives for 'module' (by its file name), or NULL. */
static const json_t *quality_reason(const json_t *report, const char *module, const char *reason)
{
	const json_t *modules = json_object_get(report, "modules"), *m, *why;
	size_t i, j;

	json_array_foreach(modules, i, m) {
		const char *path = json_string_value(json_object_get(m, "module"));

		if (!path || !ends_with(path, module))
			continue;
		json_array_foreach(json_object_get(m, "reasons"), j, why)
			if (strcmp(json_string_value(json_object_get(why, "reason")) ?: "", reason) == 0)
				return why;
	}
	return NULL;
}

/* Does the quality report list 'module' (by its file name) at all? */
static bool quality_listed(const json_t *report, const char *module)
{
	const json_t *m;
	size_t i;

	json_array_foreach(json_object_get(report, "modules"), i, m)
		if (ends_with(json_string_value(json_object_get(m, "module")) ?: "", module))
			return true;
	return false;
}

/* The block `profctl record` prints for a person: a headline and a line naming module and reason. */
static void check_quality_printed(const json_t *report, const char *module, const char *reason)
{
	_cleanup_free_ char *text = NULL, *line = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	int r;

	harness_assert(f, "open_memstream: %m");
	r = stack_quality_print(report, f);
	harness_assert(fclose(f) == 0, "open_memstream: %m");
	harness_assert(r == 1, "the poor report was not printed (%d)", r);
	harness_assert(asprintf(&line, "%s: ", reason) > 0, "asprintf: %m");
	harness_assert(strncmp(text, "stack quality: ", 15) == 0 && strstr(text, module) &&
			       strstr(text, line),
		       "the printed report lacks %s for %s:\n%s", reason, module, text);
}

/* The report names 'reason' for most samples of 'module', with a hint containing 'hint_has'. */
static void check_quality(const HarnessResult *res, const char *module, const char *reason,
			  const char *hint_has)
{
	const json_t *why = quality_reason(res->quality, module, reason);
	const char *hint = why ? json_string_value(json_object_get(why, "hint")) : NULL;
	json_int_t n = why ? json_integer_value(json_object_get(why, "samples")) : 0;

	if (!why || !json_is_true(json_object_get(res->quality, "poor"))) {
		char *text = json_dumps(res->quality, JSON_INDENT(2));

		fprintf(stderr, "%s\n", text ?: "(no report)");
		free(text);
	}
	harness_assert(why, "the quality report gives no %s for %s", reason, module);
	harness_assert((size_t)n * 2 > res->profile->n_samples, "%s for %s in only %lld of %zu samples",
		       reason, module, (long long)n, res->profile->n_samples);
	harness_assert(hint && strstr(hint, hint_has), "%s hint for %s lacks '%s': %s", reason,
		       module, hint_has, hint ?: "(none)");
	harness_assert(json_is_true(json_object_get(res->quality, "poor")), "not reported as poor");
	fprintf(stderr, "%s: %s: %s\n", module, reason, hint);
	check_quality_printed(res->quality, module, reason);
}

/*
 * The stack-quality report names the reason each provoked defect has: code
 * without CFI, a stack copy too small, JIT code without a map, a binary
 * without symbols or debug info — and what would fix it.
 */
static int test_quality(char **args)
{
	HarnessRun run = { .seconds = 1.2 };
	HarnessResult res;
	char id[128], want[160];

	{
		char *argv[] = { args[0], (char *)"2.5", NULL };

		profile_workload(argv, &run, &res);
		check_quality(&res, "workload-nocfi", "no-cfi", "-fasynchronous-unwind-tables");
		harness_result_done(&res);
	}
	{
		/* 40 x 512 bytes of stack, a 4 KiB copy */
		char *argv[] = { args[1], (char *)"2.5", (char *)"40", NULL };
		const json_t *why;
		const char *hint, *n;

		run.stack_bytes = 4096;
		profile_workload(argv, &run, &res);
		run.stack_bytes = 0;
		check_quality(&res, "deep-stack", "stack-copy", "--stack-bytes ");
		why = quality_reason(res.quality, "deep-stack", "stack-copy");
		hint = json_string_value(json_object_get(why, "hint"));
		n = strstr(hint, "--stack-bytes ");
		harness_assert(n && strtoul(n + 14, NULL, 10) > 4096,
			       "suggests no larger copy than 4096: %s", hint);
		harness_result_done(&res);
	}
	{
		char *argv[] = { args[2], (char *)"2.5", (char *)"nomap", NULL };

		profile_workload(argv, &run, &res);
		check_quality(&res, "[anonymous code]", "jit-without-map", "perf-PID.map");
		harness_result_done(&res);
	}
	{
		/* alone in a directory: its debug file, beside it in the build, is not found */
		char tmp[] = "/tmp/profd-unwind-XXXXXX", exe[600];
		char *argv[] = { exe, (char *)"2.5", (char *)"1", NULL };
		const json_t *why;
		int r;

		harness_assert(mkdtemp(tmp), "mkdtemp: %m");
		snprintf(exe, sizeof(exe), "%s/workload-split-stripped", tmp);
		r = harness_copy_file(args[3], exe, 0755);
		harness_assert(r >= 0, "copy %s: %s", args[3], strerror(-r));
		r = build_id_path(exe, id, sizeof(id));
		harness_assert(r >= 0, "no build-id in %s", exe);
		profile_workload(argv, &run, &res);
		unlink(exe);
		rmdir(tmp);
		why = quality_reason(res.quality, "workload-split-stripped", "no-debug-info") ?:
		      quality_reason(res.quality, "workload-split-stripped", "no-symbols");
		harness_assert(why, "no naming reason for the stripped binary");
		/* the hint names the build-id a debug file is found by: "xx/yyyy" without the slash */
		snprintf(want, sizeof(want), "%.2s%s", id, id + 3);
		check_quality(&res, "workload-split-stripped",
			      json_string_value(json_object_get(why, "reason")), want);
		harness_result_done(&res);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int n_args;
		int (*run)(char **args);
	} tests[] = {
		{ "split", 1, test_split },       { "split-nopie", 1, test_split },
		{ "split-static", 1, test_split },   { "cxx-throw", 1, test_cxx_throw },
		{ "remap", 1, test_remap },       { "cxx", 1, test_cxx },
		{ "stripped", 2, test_stripped }, { "jit", 1, test_jit },
		{ "jitdump", 1, test_jitdump },       { "jit-late", 1, test_jit_late },
		{ "naming-chain", 4, test_naming_chain },
		{ "remap-before-start", 1, test_remap_before_start },
		{ "jitdump-before-start", 1, test_jitdump_before_start },
		{ "deleted", 1, test_changed_on_disk }, { "replaced", 2, test_changed_on_disk },   { "truncation", 1, test_truncation },
		{ "dlopen", 2, test_dlopen },     { "hybrid", 1, test_hybrid },
		{ "quality", 4, test_quality },     { "kernel", 1, test_kernel },
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
