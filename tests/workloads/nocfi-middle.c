/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The middle function of workload-nocfi, built without unwind tables (nor
 * frame pointers), as hand-written assembly often is: nothing says where its
 * caller's frame is.
 */
#include <stdint.h>

#include "nocfi.h"

__attribute__((noinline)) uint64_t nocfi_middle(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		x = nocfi_leaf(x + i);
	return x;
}
