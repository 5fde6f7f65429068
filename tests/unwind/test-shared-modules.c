/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SharedModules loads a file once for every process that maps it: this test's
 * own executable, as forked children map it, is one module however many of
 * them name an address in it. A process that is gone before its address is
 * named cannot hand the file over (its /proc/PID/map_files is gone): that
 * does not leave the file nameless for the processes that come after it (a
 * churning machine: bpf names its stacks only at the end).
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "shared-modules.h"
#include "test-util.h"

#define CHILDREN 4

/* A child that waits until it is killed: the same mappings as ours, another pid. */
static pid_t spawn_child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);
}

/* The maps of a child, read while it runs; the child still runs on return. */
static ProcessMaps *child_maps(pid_t pid)
{
	ProcessMaps *maps = NULL;
	int r = process_maps_load((uint32_t)pid, &maps);

	CHECK(r >= 0, "maps of child %d: %s", (int)pid, strerror(-r));
	return r >= 0 ? maps : NULL;
}

static Dwfl_Module *find(SharedModules *m, const ProcessMaps *maps, uint64_t addr)
{
	ModuleInfo *info = NULL;
	uint64_t at;

	return shared_modules_find(m, maps, addr, &info, &at);
}

int main(void)
{
	_cleanup_(symbol_cache_freep) SymbolCache *cache = NULL;
	_cleanup_(shared_modules_freep) SharedModules *m = NULL;
	_cleanup_(process_maps_freep) ProcessMaps *gone = NULL, *self = NULL;
	ProcessMaps *alive[CHILDREN] = {};
	pid_t pids[CHILDREN];
	uint64_t addr = (uint64_t)(uintptr_t)&main;
	Dwfl_Module *mod;
	pid_t pid;
	int r;

	r = symbol_cache_new(&cache);
	CHECK(r >= 0, "symbol_cache_new: %s", strerror(-r));
	if (r >= 0)
		r = shared_modules_new(NULL, cache, 0, &m);
	CHECK(r >= 0, "shared_modules_new: %s", strerror(-r));
	if (r >= 0)
		r = process_maps_load((uint32_t)getpid(), &self);
	CHECK(r >= 0, "own maps: %s", strerror(-r));
	pid = spawn_child();
	CHECK(pid > 0, "fork: %m");
	if (test_failures > 0)
		return test_result();
	gone = child_maps(pid);
	reap(pid);
	if (!gone)
		return test_result();

	/* its process is gone: the file cannot be had through it */
	CHECK(!find(m, gone, addr), "a module through a process that is gone");
	mod = find(m, self, addr);
	CHECK(mod, "no module through a process that maps the file, after a gone one failed");
	CHECK(find(m, gone, addr) == mod, "the gone process's address is not named by the module");
	CHECK(shared_modules_count(m) == 1, "%zu files for one", shared_modules_count(m));

	/* every other process of the same binary: the same module, nothing opened again */
	for (size_t i = 0; i < CHILDREN; i++) {
		pids[i] = spawn_child();
		CHECK(pids[i] > 0, "fork: %m");
		alive[i] = pids[i] > 0 ? child_maps(pids[i]) : NULL;
	}
	for (size_t i = 0; i < CHILDREN; i++)
		if (alive[i])
			CHECK(find(m, alive[i], addr) == mod, "child %zu has a module of its own", i);
	CHECK(shared_modules_count(m) == 1, "%zu files for one binary in %d processes",
	      shared_modules_count(m), CHILDREN + 2);
	for (size_t i = 0; i < CHILDREN; i++) {
		if (pids[i] > 0)
			reap(pids[i]);
		process_maps_free(alive[i]);
	}
	return test_result();
}
