/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-debug-aranges: debug_aranges_parse() on arbitrary section bytes (a
 * target's debug file is the caller's). What it returns must be sorted and
 * every range read in full, so a read outside the input shows up under ASan.
 */
#include <stdint.h>
#include <stdlib.h>

#include "debug-aranges.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	DebugArange *a;
	size_t n;

	if (debug_aranges_parse(data, size, &a, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (a[i].high < a[i].low || (i > 0 && a[i].low < a[i - 1].low))
			abort();
	free(a);
	return 0;
}
