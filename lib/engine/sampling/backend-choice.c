/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "backend-choice.h"

#include <errno.h>
#include <string.h>

#include "bpf-sampler.h"

int sampling_backend_choose(const char *requested, SamplingTargetKind kind, BackendChoice *ret)
{
	if (requested && strcmp(requested, "auto") != 0) {
		if (strcmp(requested, "perf-dwarf") == 0)
			*ret = (BackendChoice){ "perf-dwarf", "requested" };
		else if (strcmp(requested, "perf-fp") == 0)
			*ret = (BackendChoice){ "perf-fp", "requested" };
		else if (strcmp(requested, "bpf") == 0) {
			int r = bpf_sampler_probe();

			if (r < 0)
				return r == -EINVAL ? -EOPNOTSUPP : r;
			*ret = (BackendChoice){ "bpf", "requested" };
		} else
			return -EINVAL;
		return 0;
	}
	if (kind != SAMPLING_TARGET_SYSTEM)
		*ret = (BackendChoice){ "perf-dwarf", "auto: perf-dwarf for a process, cgroup or unit: "
						      "it unwinds code built without frame pointers" };
	else if (bpf_sampler_probe() == 0)
		*ret = (BackendChoice){ "bpf", "auto: bpf for the whole machine: stacks are counted "
					       "in the kernel, no per-sample work in user space" };
	else
		*ret = (BackendChoice){ "perf-dwarf", "auto: bpf for the whole machine, but bpf is "
						      "not available here (kernel, build or privileges)" };
	return 0;
}
