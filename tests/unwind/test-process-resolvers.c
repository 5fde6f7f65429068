/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ProcessResolvers keeps one StackResolver per process: a process seen again
 * gets the one it had (the count does not grow), a forgotten one is dropped
 * and a new one made when it shows up again, and forgetting one process does
 * not lose another (the table moves entries when it drops one). Enough pids
 * that the table grows several times; the samples carry no frames.
 */
#include <stdio.h>

#include "cleanup.h"
#include "process-resolvers.h"
#include "test-util.h"

#define N 300

static int resolve(ProcessResolvers *rs, ProcessMaps *maps, Profile *profile, uint32_t pid)
{
	PerfSample sample = { .pid = pid, .tid = pid };
	SampleStack stack;

	return process_resolvers_resolve(rs, &sample, maps, profile, &stack);
}

/* Resolving every pid in [from, to) in steps of 'step' makes no new resolver. */
static void check_known(ProcessResolvers *rs, ProcessMaps *maps, Profile *profile, uint32_t from,
			uint32_t to, uint32_t step)
{
	size_t before = process_resolvers_count(rs);

	for (uint32_t pid = from; pid < to; pid += step) {
		int r = resolve(rs, maps, profile, pid);

		CHECK(r >= 0, "resolve pid %u: %s", pid, strerror(-r));
	}
	CHECK(process_resolvers_count(rs) == before, "%zu resolvers, expected %zu",
	      process_resolvers_count(rs), before);
}

int main(void)
{
	_cleanup_(process_resolvers_freep) ProcessResolvers *rs = NULL;
	_cleanup_profile_ Profile *profile = NULL;
	_cleanup_(process_maps_freep) ProcessMaps *maps = NULL;
	const uint32_t first = 1000000;
	int r;

	r = process_resolvers_new(&(StackResolverOptions){ .mode = STACK_UNWIND_FP }, &rs);
	CHECK(r >= 0, "process_resolvers_new: %s", strerror(-r));
	r = profile_new(&profile);
	CHECK(r >= 0, "profile_new: %s", strerror(-r));
	r = process_maps_new(first, &maps);
	CHECK(r >= 0, "process_maps_new: %s", strerror(-r));
	if (test_failures > 0)
		return test_result();

	CHECK(resolve(rs, maps, profile, 0) == -EINVAL, "pid 0 has no resolver");
	for (uint32_t pid = first; pid < first + N; pid++) {
		r = resolve(rs, maps, profile, pid);
		CHECK(r >= 0, "resolve pid %u: %s", pid, strerror(-r));
	}
	CHECK(process_resolvers_count(rs) == N, "%zu resolvers after %d pids",
	      process_resolvers_count(rs), N);
	check_known(rs, maps, profile, first, first + N, 1);

	/* drop the even pids: the odd ones keep theirs, whatever moved */
	for (uint32_t pid = first; pid < first + N; pid += 2)
		process_resolvers_forget(rs, pid);
	process_resolvers_forget(rs, first + N + 7); /* never seen: nothing happens */
	process_resolvers_forget(rs, 0);
	CHECK(process_resolvers_count(rs) == N / 2, "%zu resolvers after forgetting half",
	      process_resolvers_count(rs));
	check_known(rs, maps, profile, first + 1, first + N, 2);

	/* forgotten processes that show up again get new ones */
	for (uint32_t pid = first; pid < first + N; pid += 2) {
		r = resolve(rs, maps, profile, pid);
		CHECK(r >= 0, "resolve pid %u again: %s", pid, strerror(-r));
	}
	CHECK(process_resolvers_count(rs) == N, "%zu resolvers, expected %d",
	      process_resolvers_count(rs), N);
	check_known(rs, maps, profile, first, first + N, 1);

	for (uint32_t pid = first; pid < first + N; pid++)
		process_resolvers_forget(rs, pid);
	CHECK(process_resolvers_count(rs) == 0, "%zu resolvers after forgetting all",
	      process_resolvers_count(rs));
	return test_result();
}
