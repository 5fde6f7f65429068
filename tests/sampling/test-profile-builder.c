/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A ProfileBuilder keeps every sample, also one its resolver fails on, and
 * also when the resolver runs out of memory (in the sandboxed unwinder that is
 * its address-space limit, which the target's files can exhaust): that sample
 * goes in with an empty stack and counts as an unwind failure; the session
 * goes on. Weighted samples count as many.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cleanup.h"
#include "perf-record.h"
#include "profile-builder.h"
#include "test-util.h"

/* fails the samples whose time says so with that errno; others get no frames */
static int resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
		   Profile *profile, SampleStack *ret)
{
	(void)userdata;
	(void)maps;
	(void)profile;
	*ret = (SampleStack){ .stack = PROFILE_NONE };
	return -(int)(sample->time % 1000);
}

static int add_sample(ProfileBuilder *b, uint64_t time, uint64_t weight)
{
	PerfRecord rec = { .type = PERF_RECORD_SAMPLE };

	rec.sample = (PerfSample){ .pid = 42, .tid = 42, .time = time, .weight = weight };
	return profile_builder_add(b, &rec);
}

int main(void)
{
	_cleanup_(profile_builder_freep) ProfileBuilder *b = NULL;
	ProfileBuilderStats stats;
	int r;

	r = profile_builder_new(42, 1000000, resolve, NULL, &b);
	CHECK(r == 0, "new: %s", strerror(-r));
	if (r < 0)
		return test_result();
	profile_builder_set_start(b, 0, 0);
	r = add_sample(b, 1000, 0); /* resolved */
	CHECK(r == 0, "a resolved sample: %s", strerror(-r));
	r = add_sample(b, 2000 + EIO, 0);
	CHECK(r == 0, "a sample the resolver fails on (EIO) failed the builder: %s", strerror(-r));
	r = add_sample(b, 3000 + ENOMEM, 0);
	CHECK(r == 0, "a sample the resolver has no memory for failed the builder: %s",
	      strerror(-r));
	r = add_sample(b, 4000 + EINVAL, 5);
	CHECK(r == 0, "a weighted sample the resolver fails on: %s", strerror(-r));

	profile_builder_get_stats(b, &stats);
	CHECK(stats.samples == 8, "samples %" PRIu64 " of 8", stats.samples);
	CHECK(stats.unwind_failures == 7, "unwind failures %" PRIu64 " of 7", stats.unwind_failures);
	CHECK(profile_builder_get_profile(b)->n_samples == 8, "profile samples %zu of 8",
	      profile_builder_get_profile(b)->n_samples);
	return test_result();
}
