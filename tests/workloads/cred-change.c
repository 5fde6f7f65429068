/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload-cred-change [SECONDS]: spin in before_change() until SIGUSR1,
 * then stop being dumpable (as a program does before it handles secrets:
 * from then on its owner could not ptrace it) and spin in after_change()
 * for the rest of SECONDS (default 10). A profiler must not keep a sample
 * of after_change().
 */
#include <signal.h>
#include <sys/prctl.h>

#include "spin.h"

static volatile sig_atomic_t changed;

static void on_usr1(int sig)
{
	changed = 1;
}

static __attribute__((noinline)) uint64_t before_change(void)
{
	uint64_t x = 1;

	while (!changed)
		x = workload_mix(x + 1);
	return x;
}

static __attribute__((noinline)) uint64_t after_change(uint64_t until, uint64_t x)
{
	while (workload_now_ns() < until)
		for (int i = 0; i < 10000; i++)
			x = workload_mix(x + 1);
	return x;
}

int main(int argc, char **argv)
{
	uint64_t until = workload_now_ns() + (uint64_t)(workload_seconds(argc, argv, 1, 10.0) * 1e9);
	uint64_t x;

	signal(SIGUSR1, on_usr1);
	x = before_change();
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return 1;
	return (int)(after_change(until, x) & 1);
}
