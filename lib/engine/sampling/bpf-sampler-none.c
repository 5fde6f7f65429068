/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bpf backend of a build without the BPF programs (meson -Dbpf=disabled,
 * or no clang/bpftool/BTF at build time): it exists, and says why it cannot run.
 */
#include "bpf-sampler.h"

#include <errno.h>
#include <stddef.h>

int bpf_sampler_probe(void)
{
	return -EOPNOTSUPP;
}

int bpf_sampler_new(const SamplingTarget *target, const SamplingOptions *options,
		    const StackResolverOptions *resolver, BpfSampler **ret)
{
	return -EOPNOTSUPP;
}

/* Nothing below can be reached without a sampler; they exist for the linker. */
BpfSampler *bpf_sampler_free(BpfSampler *s)
{
	return NULL;
}

int bpf_sampler_start(BpfSampler *s)
{
	return -EOPNOTSUPP;
}

int bpf_sampler_run(BpfSampler *s)
{
	return -EOPNOTSUPP;
}

void bpf_sampler_stop(BpfSampler *s)
{
}

int bpf_sampler_get_fd(const BpfSampler *s)
{
	return -EOPNOTSUPP;
}

uint64_t bpf_sampler_get_deadline(const BpfSampler *s)
{
	return UINT64_MAX;
}

int bpf_sampler_process(BpfSampler *s)
{
	return -EOPNOTSUPP;
}

bool bpf_sampler_is_finished(const BpfSampler *s)
{
	return true;
}

const PerfRecordFormat *bpf_sampler_get_format(void)
{
	static const PerfRecordFormat none = {};

	return &none;
}

uint64_t bpf_sampler_get_start(const BpfSampler *s)
{
	return 0;
}

const Profile *bpf_sampler_get_profile(const BpfSampler *s)
{
	return NULL;
}

Profile *bpf_sampler_steal_profile(BpfSampler *s)
{
	return NULL;
}

const ProcessTable *bpf_sampler_get_processes(const BpfSampler *s)
{
	return NULL;
}

void bpf_sampler_get_metrics(const BpfSampler *s, SamplingMetrics *ret)
{
	*ret = (SamplingMetrics){ .backend = "bpf" };
}
