// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * In-kernel stack aggregation for the `bpf` backend: a perf_event program,
 * attached to one cpu-clock event per CPU, counts samples per (tgid, tid,
 * exec generation, user stack, kernel stack). Stacks are stored once each,
 * by hash, so user space reads a few thousand buckets instead of every
 * sample. A tracepoint on exec numbers each process's
 * address spaces, so samples taken before and after an exec are named from
 * the right one.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "profile-bpf.h"

/* vmlinux.h carries no macros. */
#define EEXIST 17
#define PROC_PID_INIT_INO 0xEFFFFFFCU /* the initial pid namespace's inode, fixed */
#define PID_NS_LEVELS_MAX 32          /* MAX_PID_NS_LEVEL */

char LICENSE[] SEC("license") = "GPL";

/* Set before load. */
const volatile __u32 filter = PROFILE_BPF_FILTER_TGIDS;
const volatile bool kernel_stacks = true;
/*
 * The inode of user space's pid namespace (/proc/self/ns/pid): tgids and tids
 * here are the ones it sees in its /proc, also when it runs in a container,
 * where the kernel's own (bpf_get_current_pid_tgid) name other processes.
 */
const volatile __u32 pidns_ino = PROC_PID_INIT_INO;

/* Samples counted at most (0: no limit), set by user space when sampling starts. */
__u64 max_samples = 0;

/* Read by user space while the program runs (the skeleton maps .bss). */
__u64 samples = 0;         /* samples counted into `counts` */
__u64 dropped_samples = 0; /* samples lost because `counts` was full */
__u64 lost_stacks = 0;     /* stacks not stored because `stacks` was full */
__u64 exec_errors = 0;     /* execs not numbered (`exec_gens` full) */
__u64 budget_end_ns = 0;   /* bpf_ktime_get_ns() of the first sample over max_samples */

/* stack hash -> addresses */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, ProfileBpfStack);
	__uint(max_entries, PROFILE_BPF_MAX_STACKS);
} stacks SEC(".maps");

/* Where a stack is walked before it is hashed (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, ProfileBpfStack);
	__uint(max_entries, 1);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, ProfileBpfKey);
	__type(value, __u64);
	__uint(max_entries, PROFILE_BPF_MAX_COUNTS);
} counts SEC(".maps");

/* The processes sampled (FILTER_TGIDS) or left out (FILTER_ALL). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, PROFILE_BPF_MAX_TGIDS);
} tgids SEC(".maps");

/* FILTER_CGROUP: an fd of the cgroup2 directory at index 0. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
} cgroups SEC(".maps");

/* tgid -> execs since load; absent is 0. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, PROFILE_BPF_MAX_EXECS);
} exec_gens SEC(".maps");

/*
 * The current task's tgid and tid in user space's pid namespace; false when it
 * has none there (a task of an outer namespace: user space cannot see it). A
 * task's pid has one number per namespace level down to its own namespace.
 */
static __always_inline bool current_ids(__u32 *tgid, __u32 *tid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *pid, *leader;
	unsigned int level;

	if (pidns_ino == PROC_PID_INIT_INO) {
		__u64 id = bpf_get_current_pid_tgid();

		*tgid = id >> 32;
		*tid = (__u32)id;
		return true;
	}
	pid = BPF_CORE_READ(task, thread_pid);
	leader = BPF_CORE_READ(task, group_leader, thread_pid);
	level = BPF_CORE_READ(pid, level);
	for (unsigned int i = 0; i < PID_NS_LEVELS_MAX && i <= level; i++) {
		struct upid upid;

		if (bpf_core_read(&upid, sizeof(upid), &pid->numbers[i]) < 0)
			return false;
		if (BPF_CORE_READ(upid.ns, ns.inum) != pidns_ino)
			continue;
		*tid = upid.nr;
		return bpf_core_read(tgid, sizeof(*tgid), &leader->numbers[i].nr) == 0;
	}
	return false;
}

static __always_inline bool is_target(__u32 tgid)
{
	if (tgid == 0)
		return false; /* the idle task */
	switch (filter) {
	case PROFILE_BPF_FILTER_TGIDS:
		return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
	case PROFILE_BPF_FILTER_CGROUP:
		return bpf_current_task_under_cgroup(&cgroups, 0) == 1;
	default:
		return bpf_map_lookup_elem(&tgids, &tgid) == NULL;
	}
}

static __always_inline void count_sample(const ProfileBpfKey *key)
{
	__u64 one = 1, *count;
	long r;

	count = bpf_map_lookup_elem(&counts, key);
	if (count) {
		__sync_fetch_and_add(count, 1);
		__sync_fetch_and_add(&samples, 1);
		return;
	}

	/* Another CPU may have created the bucket since the lookup. */
	r = bpf_map_update_elem(&counts, key, &one, BPF_NOEXIST);
	if (r == -EEXIST) {
		count = bpf_map_lookup_elem(&counts, key);
		if (count)
			__sync_fetch_and_add(count, 1);
	} else if (r < 0) {
		__sync_fetch_and_add(&dropped_samples, 1);
		return;
	}
	__sync_fetch_and_add(&samples, 1);
}

/*
 * Walk one stack (user or kernel) into `stacks`; returns its hash, or 0 when
 * the sample has none (or it could not be stored: *lost is set).
 */
static __always_inline __u64 store_stack(struct bpf_perf_event_data *ctx, __u64 flags,
					 __u32 lost_bit, __u32 *lost)
{
	ProfileBpfStack *buf;
	__u32 zero = 0;
	__u64 h = 0xcbf29ce484222325ULL ^ flags;
	long size, r;

	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return 0;
	/* zero-fills what the walk did not reach */
	size = bpf_get_stack(ctx, buf->ips, sizeof(buf->ips), flags);
	if (size <= 0)
		return 0;
	for (int i = 0; i < PROFILE_BPF_STACK_DEPTH; i++) {
		if (i * 8 >= size)
			break;
		h = (h ^ buf->ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	if (h == 0)
		h = 1;
	r = bpf_map_update_elem(&stacks, &h, buf, BPF_NOEXIST);
	if (r < 0 && r != -EEXIST) {
		__sync_fetch_and_add(&lost_stacks, 1);
		*lost |= lost_bit;
		return 0;
	}
	return h;
}

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	ProfileBpfKey key = {};
	__u32 *gen;

	if (!current_ids(&key.tgid, &key.tid) || !is_target(key.tgid))
		return 0;
	if (max_samples != 0 && samples >= max_samples) {
		if (budget_end_ns == 0)
			budget_end_ns = bpf_ktime_get_ns();
		return 0;
	}

	gen = bpf_map_lookup_elem(&exec_gens, &key.tgid);
	key.exec_gen = gen ? *gen : 0;
	key.user_stack = store_stack(ctx, BPF_F_USER_STACK, PROFILE_BPF_LOST_USER, &key.lost);
	if (kernel_stacks)
		key.kernel_stack = store_stack(ctx, 0, PROFILE_BPF_LOST_KERNEL, &key.lost);

	count_sample(&key);
	return 0;
}

/*
 * A target process replaced its address space: later samples belong to the
 * next one. BTF tracepoints need no tracefs (profd's unit has none).
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(profile_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid, tid, one = 1, *gen;

	if (!current_ids(&tgid, &tid) || !is_target(tgid))
		return 0;
	gen = bpf_map_lookup_elem(&exec_gens, &tgid);
	if (gen)
		__sync_fetch_and_add(gen, 1);
	else if (bpf_map_update_elem(&exec_gens, &tgid, &one, BPF_NOEXIST) < 0)
		__sync_fetch_and_add(&exec_errors, 1);
	return 0;
}

/* The last thread of a process is gone: its tgid may be handed out again. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(profile_exit, struct task_struct *task)
{
	__u32 tgid, tid;

	/* the exiting task is the current one */
	if (current_ids(&tgid, &tid) && BPF_CORE_READ(task, signal, live.counter) == 0)
		bpf_map_delete_elem(&exec_gens, &tgid);
	return 0;
}
