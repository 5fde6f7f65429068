/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libworkload-plugin.so: dlopen'ed by workload-dlopen in the middle of a session. */
#include "spin.h"

__attribute__((noinline)) uint64_t plugin_hot(uint64_t ns);

uint64_t plugin_hot(uint64_t ns)
{
	uint64_t end = workload_now_ns() + ns, x = 11;

	while (workload_now_ns() < end)
		for (int i = 0; i < 256; i++)
			x = workload_mix(x + (uint64_t)i);
	return x;
}
