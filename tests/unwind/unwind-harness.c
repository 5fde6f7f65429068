/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unwind-harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "sampling-session.h"
#include "time-util.h"
#include "workload-process.h"

void harness_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("FAIL: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_FAILURE);
}

int harness_spawn(char *const argv[], pid_t *ret)
{
	char self[PATH_MAX], link[64], exe[PATH_MAX];
	ssize_t n;
	pid_t pid;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -errno;
	self[n] = '\0';
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	/* the address space to profile is the workload's, not a copy of ours */
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 2000; i++) {
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (strcmp(exe, self) != 0)
				break;
		}
		usleep(1000);
	}
	/* and past the dynamic loader, so its libraries are mapped */
	usleep(20000);
	*ret = pid;
	return 0;
}

int harness_copy_file(const char *from, const char *to, mode_t mode)
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

int harness_remove_dir(const char *dir)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    unlinkat(dirfd(d), e->d_name, 0) < 0)
			return -errno;
	return rmdir(dir) < 0 ? -errno : 0;
}

static unsigned count_mappings(pid_t pid, const char *perms, const char *path)
{
	_cleanup_fclose_ FILE *f = NULL;
	char fn[64], line[4096], p[8];
	unsigned n = 0;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		harness_fail("cannot open %s: %m", fn);
	while (fgets(line, sizeof(line), f))
		n += sscanf(line, "%*x-%*x %7s", p) == 1 && strcmp(p, perms) == 0 &&
		     (!path || strstr(line, path));
	return n;
}

void harness_go_and_wait_for_mappings(pid_t pid, const char *go_file, const char *perms,
				      const char *path, unsigned count)
{
	_cleanup_close_ int fd = open(go_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	uint64_t end = clock_nanos(CLOCK_MONOTONIC) + 30 * NSEC_PER_SEC;

	harness_assert(fd >= 0, "cannot create %s: %m", go_file);
	while (count_mappings(pid, perms, path) < count) {
		harness_assert(clock_nanos(CLOCK_MONOTONIC) < end,
			       "no %u %s mappings of %s after 30 s", count, perms, path ?: "anything");
		usleep(1000);
	}
}

void harness_reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
}

static void stop_session(void *session)
{
	sampling_session_stop(session);
}

int harness_profile(pid_t pid, const HarnessRun *run, HarnessResult *ret)
{
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	_cleanup_(stack_resolver_freep) StackResolver *resolver = NULL;
	StackResolverOptions ro = run->resolver;
	SamplingOptions so = {
		.hz = run->hz ?: 999,
		.duration_nanos = (uint64_t)(run->seconds * 1e9),
		/* the test is its sessions' operator: the window it asks for, not profd's 60 s default */
		.max_duration_nanos = (uint64_t)(run->seconds * 1e9),
		.backend = run->backend,
		.exclude_kernel = !run->kernel,
		.stack_bytes = run->stack_bytes,
	};
	TestCpuTime cpu_before = {}, cpu_after = {};
	CpuCall stopper = { .fn = stop_session, .cpu.pid = pid,
			    .cpu.nanos = (uint64_t)(run->cpu_seconds * 1e9) };
	SamplingMetrics m;
	bool cpu_known;
	int r;

	r = stack_unwind_mode_from_backend(run->backend, &ro.mode);
	if (r < 0)
		return r;
	ro.kernel = run->kernel;
	r = stack_resolver_new(&ro, &resolver);
	if (r < 0)
		return r;
	so.resolve = stack_resolver_resolve;
	so.resolve_userdata = resolver;
	r = sampling_session_new(pid, &so, &s);
	if (r < 0)
		return r;
	if (run->before_start)
		run->before_start(pid, run->before_start_userdata);
	cpu_known = test_process_cpu_time(pid, &cpu_before) >= 0;
	stopper.arg = s;
	if (run->cpu_seconds > 0)
		cpu_call_start(&stopper);
	r = sampling_session_run(s);
	if (run->cpu_seconds > 0)
		cpu_call_join(&stopper);
	if (r < 0)
		return r;
	cpu_known = cpu_known && test_process_cpu_time(pid, &cpu_after) >= 0;
	sampling_session_get_metrics(s, &m);
	/* a window that should end by the target's CPU time ended by its hang guard instead */
	if (run->cpu_seconds > 0 && strcmp(m.end_reason, "duration") == 0)
		harness_fail("the target used less than %.1f s of CPU time in the %.0f s window",
			     run->cpu_seconds, run->seconds);
	if (getenv("UNWIND_TEST_VERBOSE"))
		fprintf(stderr,
			"session: hz %u, %.2f s, %" PRIu64 " captured, %" PRIu64
			" dropped, %" PRIu64 " lost records, %" PRIu64 " throttled, end %s\n",
			m.hz, m.duration_nanos / 1e9, m.samples_captured, m.samples_dropped,
			m.lost_records, m.throttle_events, m.end_reason);
	*ret = (HarnessResult){
		.truncated = m.truncated_stacks,
		.unwind_failures = m.unwind_failures,
		.dropped = m.samples_dropped,
		.cpu_known = cpu_known,
		.start_mono = sampling_session_get_start(s),
	};
	if (cpu_known)
		ret->cpu = (TestCpuTime){
			.user_nanos = cpu_after.user_nanos - cpu_before.user_nanos,
			.system_nanos = cpu_after.system_nanos - cpu_before.system_nanos,
		};
	snprintf(ret->cache_state, sizeof(ret->cache_state), "%s",
		 stack_resolver_cache_state(resolver));
	stack_resolver_get_stats(resolver, &ret->resolver_stats);
	r = stack_resolver_finish(resolver);
	if (r >= 0)
		r = stack_quality_to_json(stack_resolver_get_quality(resolver), NULL, NULL,
					  &ret->quality);
	if (r < 0)
		return r;
	ret->profile = sampling_session_steal_profile(s);
	return ret->profile ? 0 : -ENOMEM;
}

void harness_result_done(HarnessResult *r)
{
	r->profile = profile_free(r->profile);
	json_decref(r->quality);
	r->quality = NULL;
}

size_t harness_stack_frames(const Profile *p, uint32_t leaf, const ProfileFrame **frames,
			    size_t max)
{
	size_t n = 0;

	for (uint32_t node = leaf; node != PROFILE_NONE && n < max; node = p->stacks[node].parent)
		frames[n++] = &p->frames[p->stacks[node].frame];
	return n;
}

const char *harness_frame_name(const Profile *p, const ProfileFrame *f)
{
	return profile_string(p, f->function) ?: "(null)";
}

bool harness_stack_has(const Profile *p, uint32_t leaf, const char *name)
{
	for (uint32_t node = leaf; node != PROFILE_NONE; node = p->stacks[node].parent)
		if (strcmp(harness_frame_name(p, &p->frames[p->stacks[node].frame]), name) == 0)
			return true;
	return false;
}

const char *harness_self_function(const Profile *p, uint32_t leaf)
{
	for (uint32_t node = leaf; node != PROFILE_NONE; node = p->stacks[node].parent) {
		const ProfileFrame *f = &p->frames[p->stacks[node].frame];

		if (!f->inlined && !f->kernel)
			return harness_frame_name(p, f);
	}
	return NULL;
}
