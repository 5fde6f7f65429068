/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-frame-walk [-a] [-s STACK_BYTES] [-t MIN_TABLE_SHARE] SECONDS WORKLOAD ARGS...:
 * profile a real workload and unwind every sample twice, as it arrives:
 * with the compiled CFI tables (the default method, libdwfl where they
 * cannot say) and with libdwfl alone. The two must agree on every sample —
 * the same lookup addresses and the same "truncated" — and at least
 * MIN_TABLE_SHARE of the samples must have been walked by the tables alone.
 * The stack copy size the walks suggest (adaptive stack copy) must grow
 * when the copy was too small; with -a a second session copies that size
 * and must not miss stack in more than 1% of its samples.
 */
#include <asm/perf_regs.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "address-space.h"
#include "cleanup.h"
#include "dwarf-unwind.h"
#include "sampling-session.h"
#include "unwind-harness.h"

#define MAX_DEPTH 128
#define SHOW_MISMATCHES 5

typedef struct Side {
	AddressSpace *space;
	Unwinder *unwinder;
	uint64_t pcs[MAX_DEPTH];
	int n;
	bool truncated;
} Side;

typedef struct Compare {
	Side tables, libdw;
	uint64_t samples, mismatches, truncated;
} Compare;

static void side_init(Side *s, SymbolCache *cache, UnwindMethod method)
{
	int r = address_space_new(NULL, cache, 0, &s->space);

	harness_assert(r >= 0, "address_space_new: %s", strerror(-r));
	r = unwinder_new(s->space, &s->unwinder);
	harness_assert(r >= 0, "unwinder_new: %s", strerror(-r));
	unwinder_set_method(s->unwinder, method);
}

static void side_done(Side *s)
{
	/* the Dwfl refers to the unwinder: free the address space first */
	address_space_free(s->space);
	unwinder_free(s->unwinder);
}

static void side_unwind(Side *s, const PerfSample *sample, const ProcessMaps *maps)
{
	int r = address_space_update(s->space, maps);

	harness_assert(r >= 0, "address_space_update: %s", strerror(-r));
	s->truncated = false;
	s->n = unwind_sample(s->unwinder, sample, s->pcs, MAX_DEPTH, &s->truncated);
	harness_assert(s->n >= 0, "unwind_sample: %s", strerror(-s->n));
}

static void print_side(const char *what, const Side *s)
{
	fprintf(stderr, "  %s: %d frames%s:", what, s->n, s->truncated ? ", truncated" : "");
	for (int i = 0; i < s->n; i++)
		fprintf(stderr, " %" PRIx64, s->pcs[i]);
	fputc('\n', stderr);
}

static int compare_sample(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			  Profile *profile, SampleStack *ret)
{
	Compare *c = userdata;
	bool same;

	*ret = (SampleStack){ .stack = PROFILE_NONE };
	side_unwind(&c->tables, sample, maps);
	side_unwind(&c->libdw, sample, maps);
	c->samples++;
	c->truncated += c->libdw.truncated;
	same = c->tables.n == c->libdw.n && c->tables.truncated == c->libdw.truncated &&
	       memcmp(c->tables.pcs, c->libdw.pcs, (size_t)c->libdw.n * sizeof(uint64_t)) == 0;
	if (!same && c->mismatches++ < SHOW_MISMATCHES) {
		uint64_t ip = 0, sp = 0;

		perf_sample_get_reg(sample, PERF_REG_X86_IP, &ip);
		perf_sample_get_reg(sample, PERF_REG_X86_SP, &sp);
		fprintf(stderr, "sample %" PRIu64 " (tid %u, ip %" PRIx64 ", sp %" PRIx64
				", %" PRIu64 " stack bytes) differs:\n",
			c->samples, sample->tid, ip, sp, sample->stack_dyn_size);
		print_side("tables", &c->tables);
		print_side("libdw ", &c->libdw);
	}
	return 0;
}

/* One session of a fresh process of 'argv', both unwinders on every sample; checks they agree. */
static void compare_session(char **argv, SamplingOptions so, SymbolCache *cache, double min_share,
			    UnwinderStats *ret_stats)
{
	_cleanup_sampling_session_ SamplingSession *s = NULL;
	UnwinderStats libdw_stats;
	Compare c = {};
	double share;
	pid_t pid;
	int r;

	side_init(&c.tables, cache, UNWIND_METHOD_TABLES);
	side_init(&c.libdw, cache, UNWIND_METHOD_LIBDW);
	r = harness_spawn(argv, &pid);
	harness_assert(r >= 0, "cannot start '%s': %s", argv[0], strerror(-r));
	so.resolve = compare_sample;
	so.resolve_userdata = &c;
	r = sampling_session_new(pid, &so, &s);
	harness_assert(r >= 0, "sampling_session_new: %s", strerror(-r));
	r = sampling_session_run(s);
	harness_reap(pid);
	harness_assert(r >= 0, "sampling session: %s", strerror(-r));

	unwinder_get_stats(c.tables.unwinder, ret_stats);
	unwinder_get_stats(c.libdw.unwinder, &libdw_stats);
	share = c.samples ? (double)ret_stats->table_samples / (double)c.samples : 0;
	fprintf(stderr,
		"%s (%" PRIu32 "-byte stacks): %" PRIu64 " samples (%" PRIu64 " truncated, %" PRIu64
		" beyond the copy), %" PRIu64 " differ; tables alone walked %.1f%% (%" PRIu64
		" went to libdw)\n",
		argv[0], so.stack_bytes ?: 16384, c.samples, c.truncated,
		ret_stats->exhausted_samples, c.mismatches, share * 100, ret_stats->libdw_samples);
	harness_assert(c.samples >= 100, "only %" PRIu64 " samples", c.samples);
	harness_assert(libdw_stats.table_samples == 0, "the libdw side used the tables");
	harness_assert(c.mismatches == 0, "%" PRIu64 " of %" PRIu64 " samples unwound differently",
		       c.mismatches, c.samples);
	harness_assert(share >= min_share, "tables walked %.1f%% of the samples, expected %.0f%%",
		       share * 100, min_share * 100);
	sampling_session_free(TAKE_PTR(s));
	side_done(&c.tables);
	side_done(&c.libdw);
}

int main(int argc, char **argv)
{
	_cleanup_(symbol_cache_freep) SymbolCache *cache = NULL;
	SamplingOptions so = { .hz = 999, .exclude_kernel = true };
	double min_share = 0.0;
	bool adapt = false;
	UnwinderStats st;
	uint32_t copied, suggested;
	int opt, r;

	while ((opt = getopt(argc, argv, "+as:t:")) != -1)
		switch (opt) {
		case 'a':
			adapt = true;
			break;
		case 's':
			so.stack_bytes = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 't':
			min_share = atof(optarg);
			break;
		default:
			return 2;
		}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: test-frame-walk [-a] [-s BYTES] [-t SHARE] SECONDS WORKLOAD "
				"ARGS...\n");
		return 2;
	}
	so.duration_nanos = (uint64_t)(atof(argv[optind]) * 1e9);
	r = symbol_cache_new(&cache);
	harness_assert(r >= 0, "symbol_cache_new: %s", strerror(-r));
	compare_session(argv + optind + 1, so, cache, min_share, &st);

	/* adaptive stack copy: the size the walks suggest, then a session with it */
	copied = so.stack_bytes ?: 16384;
	suggested = unwind_suggest_stack_bytes(&st, copied, 65528);
	fprintf(stderr, "suggested stack copy: %" PRIu32 " bytes (copied %" PRIu32 ")\n", suggested,
		copied);
	harness_assert(suggested >= UNWIND_STACK_MIN && suggested <= 65528,
		       "suggestion %" PRIu32 " out of range", suggested);
	if (st.exhausted_samples * 100 > st.table_samples + st.libdw_samples)
		harness_assert(suggested > copied, "%" PRIu64 " walks wanted more than %" PRIu32
			       " bytes, but %" PRIu32 " was suggested",
			       st.exhausted_samples, copied, suggested);
	if (adapt) {
		so.stack_bytes = suggested;
		compare_session(argv + optind + 1, so, cache, min_share, &st);
		harness_assert(st.exhausted_samples * 100 <= st.table_samples + st.libdw_samples,
			       "with the suggested %" PRIu32 " bytes, %" PRIu64 " walks wanted more",
			       suggested, st.exhausted_samples);
	}
	return 0;
}
