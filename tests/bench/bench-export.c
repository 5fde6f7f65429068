/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Export time per format for a profile of 1 000 000 samples over 100 000
 * distinct stacks (random stacks of depth up to 40, 8 threads). Each format is
 * written to a temporary file five times; the medians of wall time and of the
 * process's CPU time are reported (CPU time is the fairer figure on a shared
 * machine), folding included: export_profile() folds every time. The folding
 * alone is timed too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "export.h"
#include "fold.h"
#include "synthetic-profile.h"

#define RUNS 5

static double clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct Timing {
	double wall[RUNS], cpu[RUNS];
	double wall_start, cpu_start;
} Timing;

static void timing_start(Timing *t)
{
	t->wall_start = clock_ms(CLOCK_MONOTONIC);
	t->cpu_start = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
}

static void timing_stop(Timing *t, int run)
{
	t->wall[run] = clock_ms(CLOCK_MONOTONIC) - t->wall_start;
	t->cpu[run] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - t->cpu_start;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void timing_print(Timing *t, const char *what, long size)
{
	qsort(t->wall, RUNS, sizeof(double), compare_double);
	qsort(t->cpu, RUNS, sizeof(double), compare_double);
	printf("%-12s wall median %7.1f ms (min %7.1f)  cpu median %7.1f ms (min %7.1f)", what,
	       t->wall[RUNS / 2], t->wall[0], t->cpu[RUNS / 2], t->cpu[0]);
	if (size >= 0)
		printf("  %.1f MB", size / 1e6);
	putchar('\n');
}

int main(int argc, char **argv)
{
	size_t n_samples = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	uint32_t n_stacks = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
	_cleanup_profile_ Profile *p = NULL;
	_cleanup_fclose_ FILE *null = fopen("/dev/null", "we");
	Timing t;
	int r;

	r = synthetic_profile(SYNTHETIC_RANDOM, n_samples, n_stacks, 1, &p);
	if (r < 0 || !null) {
		fprintf(stderr, "bench-export: cannot build the profile: %s\n", strerror(-r));
		return 1;
	}
	for (int i = 0; i < RUNS; i++) {
		_cleanup_(folding_freep) Folding *f = NULL;

		timing_start(&t);
		r = fold_profile(p, &f);
		timing_stop(&t, i);
		if (r < 0) {
			fprintf(stderr, "bench-export: cannot fold: %s\n", strerror(-r));
			return 1;
		}
		if (i == 0)
			printf("profile: %zu samples, %u stack nodes, %zu distinct folded stacks, "
			       "%u threads\n",
			       p->n_samples, p->n_stacks, f->n_stacks, f->n_threads);
	}
	timing_print(&t, "fold only", -1);

	for (int format = 0; format < _EXPORT_FORMAT_MAX; format++) {
		long size = 0;

		if (!export_format_is_profile(format))
			continue;
		for (int i = 0; i < RUNS; i++) {
			_cleanup_fclose_ FILE *out = tmpfile();

			timing_start(&t);
			r = export_profile(p, format, out);
			timing_stop(&t, i);
			if (r < 0) {
				fprintf(stderr, "bench-export: %s failed: %s\n",
					export_format_to_string(format), strerror(-r));
				return 1;
			}
			size = ftell(out);
		}
		timing_print(&t, export_format_to_string(format), size);
	}
	return 0;
}
