/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-stage sample shares under a fixed-period sampler, without a daemon: the
 * spans of workload-scanner's plan (scanner-plan.h) on two threads, preempted
 * between stages, and the samples a cpu-clock event takes (one every 1/hz of
 * each thread's CPU time, exactly: the kernel turns a frequency into a fixed
 * period for it), go through the join. For every speed of a unit of work from
 * 0.8 to 1.6 ms and several phases of the sampler, each stage's samples are
 * all its own hot function's, and its share of the samples is its share of
 * the CPU time: every stage is sampled at live-record's 60 chunks at 199 Hz
 * (at 20, about 80 samples, the one-unit stages expect 8 and may get none),
 * and the shares are within the 5 points live-runs allows at its 200 chunks
 * at 499 Hz with room to spare. Chunks of one length do not have that: at a
 * chunk of two periods a stage gets no sample at all, which is what a live
 * run of the scanner once showed (source-read 0 of 80 samples, reporting
 * three times its share) and this test checks it would see.
 */
#include <stdlib.h>

#include "cleanup.h"
#include "profile.h"
#include "scanner-plan.h"
#include "span-log.h"
#include "stage-join.h"
#include "test-util.h"

#define THREADS 2
#define UNIT_ROUNDS 2048
/* CLOCK_MONOTONIC of the profile's time 0 */
#define START_NS 1000000000ULL

static const Stage stage_of[SCANNER_STAGES] = { STAGE_SOURCE_READ, STAGE_DECODE,
						STAGE_PHASE2_KEYWORD_AC, STAGE_REPORTING };
static const char *const hot_of[SCANNER_STAGES] = { "read_hot", "decode_hot", "scan_hot",
						    "report_hot" };

typedef uint64_t (*PlanFn)(unsigned thread, unsigned chunk, unsigned stage, unsigned unit_rounds);

/* Chunks all of one length: the scanner's plan before chunks were scaled. */
static uint64_t same_chunks(unsigned thread, unsigned chunk, unsigned stage, unsigned unit_rounds)
{
	return (uint64_t)scanner_stage_units[stage] * unit_rounds;
}

typedef struct Shares {
	uint64_t samples[SCANNER_STAGES];
	uint64_t cpu_ns[SCANNER_STAGES];
	uint64_t staged, cpu_all;
	bool own_hot; /* every stage's samples are its hot function's */
} Shares;

/*
 * One run: 'chunks' chunks of 'plan' on each thread at 'unit_ns' of CPU time a
 * unit, sampled at 'hz' from 'phase' (a fraction of the period, per thread),
 * joined; what each stage got.
 */
static void simulate(PlanFn plan, unsigned chunks, uint64_t unit_ns, uint32_t hz, double phase,
		     Shares *ret)
{
	_cleanup_profile_ Profile *p = NULL;
	SpanLog log = {};
	uint32_t stacks[SCANNER_STAGES];
	uint64_t period = 1000000000ULL / hz;
	StageJoin j;
	Shares sh = { .own_hot = true };
	int r = profile_new(&p);

	log.allocated = (size_t)THREADS * chunks * SCANNER_STAGES;
	log.intervals = calloc(log.allocated, sizeof(SpanInterval));
	CHECK(r == 0 && log.intervals, "allocation");
	if (r < 0 || !log.intervals) {
		free(log.intervals);
		return;
	}
	for (unsigned s = 0; s < SCANNER_STAGES; s++) {
		ProfileFrame f = { .module = PROFILE_NONE, .build_id = PROFILE_NONE, .file = PROFILE_NONE };
		uint32_t frame;

		profile_intern_string(p, hot_of[s], &f.function);
		profile_intern_frame(p, &f, &frame);
		profile_intern_stack(p, PROFILE_NONE, frame, &stacks[s]);
	}
	for (unsigned t = 0; t < THREADS; t++) {
		/* wall time runs on while the thread waits between stages; CPU time does not */
		uint64_t wall = START_NS + 1000 * t, cpu = 0;
		uint64_t next_sample = (uint64_t)(phase * (double)period) + t * period / THREADS;

		for (unsigned c = 0; c < chunks; c++)
			for (unsigned s = 0; s < SCANNER_STAGES; s++) {
				uint64_t d = plan(t, c, s, UNIT_ROUNDS) * unit_ns / UNIT_ROUNDS;

				log.intervals[log.n_intervals++] = (SpanInterval){
					.begin_ns = wall, .end_ns = wall + d, .tid = 100 + t, .stage = stage_of[s]
				};
				for (; next_sample < cpu + d; next_sample += period)
					profile_add_sample(p, 100 + t, wall + (next_sample - cpu) - START_NS,
							   stacks[s]);
				sh.cpu_ns[s] += d;
				wall += d + scanner_stage_scale(t + 7, c, s) * 500;
				cpu += d;
			}
	}
	log.stats.spans = log.n_intervals;
	CHECK(stage_join(p, &log, START_NS, &j) == 0, "join");
	for (unsigned s = 0; s < SCANNER_STAGES; s++) {
		const JoinGroup *g = &j.stages[stage_of[s]];

		sh.samples[s] = g->samples;
		sh.staged += g->samples;
		sh.cpu_all += sh.cpu_ns[s];
		if (g->samples > 0 && (g->n_hottest != 1 || g->hottest[0].samples != g->samples ||
				       strcmp(p->strings[g->hottest[0].function], hot_of[s]) != 0))
			sh.own_hot = false;
	}
	CHECK(j.unstaged.samples == 0, "%lu samples in no stage", j.unstaged.samples);
	free(log.intervals);
	*ret = sh;
}

/* The largest gap, in points, between a stage's share of the samples and of the CPU time. */
static double worst_points(const Shares *sh)
{
	double worst = 0;

	for (unsigned s = 0; s < SCANNER_STAGES; s++) {
		double d = 100.0 * ((double)sh->samples[s] / (double)sh->staged -
				    (double)sh->cpu_ns[s] / (double)sh->cpu_all);

		worst = d > worst ? d : -d > worst ? -d : worst;
	}
	return worst;
}

static void test_scanner_plan(void)
{
	static const double phases[] = { 0.0, 0.13, 0.37, 0.5, 0.71, 0.94 };
	double worst_record = 0, worst_runs = 0;
	uint64_t fewest = UINT64_MAX;

	for (uint64_t unit_ns = 800000; unit_ns <= 1600000; unit_ns += 2000)
		for (size_t k = 0; k < ELEMENTSOF(phases); k++) {
			Shares record, runs;

			/* live-record: profctl record --stages -F 199 -- scanner --chunks 60 */
			simulate(scanner_stage_rounds, 60, unit_ns, 199, phases[k], &record);
			for (unsigned s = 0; s < SCANNER_STAGES; s++) {
				CHECK(record.samples[s] > 0, "unit %lu ns, phase %.2f: stage %s has no sample",
				      unit_ns, phases[k], stage_to_string(stage_of[s]));
				fewest = record.samples[s] < fewest ? record.samples[s] : fewest;
			}
			CHECK(record.own_hot, "unit %lu ns: a stage has samples of another's function",
			      unit_ns);
			if (worst_points(&record) > worst_record)
				worst_record = worst_points(&record);

			/* live-runs: PROFD_LIVE_HZ=499 scanner --chunks 200 */
			simulate(scanner_stage_rounds, 200, unit_ns, 499, phases[k], &runs);
			CHECK(runs.own_hot, "unit %lu ns: a stage has samples of another's function",
			      unit_ns);
			CHECK(worst_points(&runs) <= 3,
			      "unit %lu ns, phase %.2f: a stage's sample share is %.1f points off its CPU share",
			      unit_ns, phases[k], worst_points(&runs));
			if (worst_points(&runs) > worst_runs)
				worst_runs = worst_points(&runs);
		}
	printf("scanner plan, units of 0.8-1.6 ms: 60 chunks at 199 Hz at least %lu samples a stage, "
	       "at most %.1f points off; 200 chunks at 499 Hz at most %.1f points off\n",
	       fewest, worst_record, worst_runs);
}

/* The check above would have seen the chunks of one length lock onto the sampler. */
static void test_same_chunks_lock(void)
{
	/* at 199 Hz two periods are 10.050 ms: a chunk of ten units of 1.005 ms */
	uint64_t unit_ns = 2 * (1000000000ULL / 199) / 10;
	bool unsampled = false;

	for (double phase = 0; phase < 1; phase += 0.05) {
		Shares sh;

		simulate(same_chunks, 20, unit_ns, 199, phase, &sh);
		unsampled |= sh.samples[0] == 0 || sh.samples[3] == 0;
	}
	CHECK(unsampled, "chunks of two periods: every phase sampled source-read and reporting");
}

int main(void)
{
	test_scanner_plan();
	test_same_chunks_lock();
	return test_result();
}
