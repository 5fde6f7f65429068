// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * In-kernel stack aggregation for the `bpf` backend: a perf_event program,
 * attached to one cpu-clock event per CPU, counts samples per (tgid, tid,
 * user stack, kernel stack). Stacks are deduplicated by the kernel in a
 * stack-trace map, so user space reads a few thousand buckets instead of
 * every sample.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "profile-bpf.h"

/* vmlinux.h carries no macros. */
#define EFAULT 14
#define EEXIST 17

char LICENSE[] SEC("license") = "GPL";

/* Process to profile, set before load; 0 samples every process but the idle task. */
const volatile __u32 target_tgid = 0;

/* Samples lost because `counts` was full, and stacks bpf_get_stackid() could not store. */
__u64 dropped_samples = 0;
__u64 user_stack_errors = 0;
__u64 kernel_stack_errors = 0;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_BPF_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, PROFILE_BPF_MAX_STACKS);
} stackmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, ProfileBpfKey);
	__type(value, __u64);
	__uint(max_entries, PROFILE_BPF_MAX_COUNTS);
} counts SEC(".maps");

static __always_inline void count_sample(const ProfileBpfKey *key)
{
	__u64 one = 1, *count;
	long r;

	count = bpf_map_lookup_elem(&counts, key);
	if (count) {
		__sync_fetch_and_add(count, 1);
		return;
	}

	/* Another CPU may have created the bucket since the lookup. */
	r = bpf_map_update_elem(&counts, key, &one, BPF_NOEXIST);
	if (r == -EEXIST) {
		count = bpf_map_lookup_elem(&counts, key);
		if (count)
			__sync_fetch_and_add(count, 1);
	} else if (r < 0)
		__sync_fetch_and_add(&dropped_samples, 1);
}

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	ProfileBpfKey key = {
		.tgid = id >> 32,
		.tid = (__u32)id,
	};

	if (target_tgid != 0 ? key.tgid != target_tgid : key.tgid == 0)
		return 0;

	key.user_stack_id = bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
	key.kernel_stack_id = bpf_get_stackid(ctx, &stackmap, 0);

	/* -EFAULT only says the sample has no such stack (user mode: no kernel stack). */
	if (key.user_stack_id < 0 && key.user_stack_id != -EFAULT)
		__sync_fetch_and_add(&user_stack_errors, 1);
	if (key.kernel_stack_id < 0 && key.kernel_stack_id != -EFAULT)
		__sync_fetch_and_add(&kernel_stack_errors, 1);

	count_sample(&key);
	return 0;
}
