/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread-id set against a plain bitmap under random adds and removes
 * (removal closes the probe gap, so later members must stay findable).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "test-util.h"
#include "tid-set.h"

#define UNIVERSE 4096

int main(void)
{
	static bool reference[UNIVERSE];
	uint64_t state = 1;
	size_t count = 0;
	TidSet s = {};

	for (int step = 0; step < 200000; step++) {
		uint32_t tid;
		bool add;

		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		/* few distinct tids in clusters, so probe runs get long and wrap */
		tid = 1 + (uint32_t)((state >> 33) % (step < 100000 ? 300 : UNIVERSE - 1));
		add = (state >> 20) % 3 != 0;
		if (add) {
			int r = tid_set_add(&s, tid);

			CHECK(r == (reference[tid] ? 0 : 1), "add %u returned %d", tid, r);
			count += !reference[tid];
			reference[tid] = true;
		} else {
			bool removed = tid_set_remove(&s, tid);

			CHECK(removed == reference[tid], "remove %u returned %d", tid, removed);
			count -= reference[tid];
			reference[tid] = false;
		}
		CHECK(s.count == count, "count %" PRIu32 ", expected %zu", s.count, count);
		if (test_failures)
			break;
	}
	for (uint32_t tid = 1; tid < UNIVERSE; tid++)
		CHECK(tid_set_contains(&s, tid) == reference[tid], "membership of %u", tid);
	CHECK(!tid_set_remove(&s, 0) && tid_set_add(&s, 0) < 0, "tid 0 is never a member");
	tid_set_clear(&s);
	return test_result();
}
