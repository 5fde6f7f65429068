/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ARRAY_RESERVE and ARRAY_RESERVE_U32 (lib/common/array.h): the capacities
 * they grow to, that the elements survive growth, and the uint32_t limit.
 */
#include <stdint.h>
#include <stdlib.h>

#include "array.h"
#include "test-util.h"

static void test_size_t(void)
{
	uint64_t *a = NULL;
	size_t allocated = 0;

	CHECK(ARRAY_RESERVE(a, allocated, 0, 16) == 0 && !a && allocated == 0,
	      "no room asked, none made");
	CHECK(ARRAY_RESERVE(a, allocated, 1, 16) == 0 && a && allocated == 16,
	      "the first element gets the initial 16, got %zu", allocated);
	for (size_t i = 0; i < 16; i++)
		a[i] = i * 7;
	CHECK(ARRAY_RESERVE(a, allocated, 16, 16) == 0 && allocated == 16, "16 fit in 16");
	CHECK(ARRAY_RESERVE(a, allocated, 100, 16) == 0 && allocated == 128,
	      "100 double 16 to 128, got %zu", allocated);
	for (size_t i = 0; i < 16; i++)
		CHECK(a[i] == i * 7, "element %zu kept through growth", i);
	free(a);
}

static void test_u32(void)
{
	uint32_t *a = NULL;
	uint32_t allocated = 0;

	CHECK(ARRAY_RESERVE_U32(a, allocated, 257, 256) == 0 && allocated == 512,
	      "257 double 256 to 512, got %u", allocated);
	a[511] = 5;
	CHECK(ARRAY_RESERVE_U32(a, allocated, (size_t)UINT32_MAX + 1, 256) == -E2BIG &&
		      allocated == 512 && a[511] == 5,
	      "more than 2^32 - 1 elements are refused, the array unchanged");
	free(a);
}

int main(void)
{
	test_size_t();
	test_u32();
	return test_result();
}
