/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bpf-buckets.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "cleanup.h"
#include "perf-synth.h"
#include "profile-bpf.h"
#include "profile.skel.h"
#include "task-list.h"

/* One bucket of `counts`. */
typedef struct Bucket {
	ProfileBpfKey key;
	uint64_t count;
} Bucket;

typedef struct BucketContext {
	struct profile_bpf *skel;
	ProcessTable *processes;
	const BpfBucketOutput *out;
	BpfBucketStats *stats;
	PerfSynthRecord *rec; /* scratch: a few KiB */
} BucketContext;

void bpf_bucket_stats_clear(BpfBucketStats *s)
{
	tid_set_clear(&s->threads_seen);
	tid_set_clear(&s->processes_seen);
	tid_set_clear(&s->processes_excluded);
}

/* Every bucket of `counts`, in batches. */
static int read_buckets(struct profile_bpf *skel, Bucket **ret, size_t *ret_n)
{
	int fd = bpf_map__fd(skel->maps.counts);
	uint32_t max = bpf_map__max_entries(skel->maps.counts);
	_cleanup_free_ ProfileBpfKey *keys = calloc(max, sizeof(ProfileBpfKey));
	_cleanup_free_ uint64_t *values = calloc(max, sizeof(uint64_t));
	_cleanup_free_ Bucket *buckets = NULL;
	ProfileBpfKey in, out; /* opaque batch tokens, at least as big as the map's */
	size_t n = 0;
	int r = 0;

	if (!keys || !values)
		return -ENOMEM;
	while (n < max) {
		uint32_t count = max - (uint32_t)n;

		r = bpf_map_lookup_batch(fd, n ? &in : NULL, &out, keys + n, values + n, &count, NULL);
		n += count;
		if (r < 0)
			break;
		in = out;
	}
	if (r < 0 && r != -ENOENT)
		return r;
	buckets = calloc(n ?: 1, sizeof(Bucket));
	if (!buckets)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		buckets[i] = (Bucket){ .key = keys[i], .count = values[i] };
	*ret = TAKE_PTR(buckets);
	*ret_n = n;
	return 0;
}

static int bucket_compare(const void *a, const void *b)
{
	const ProfileBpfKey *x = &((const Bucket *)a)->key, *y = &((const Bucket *)b)->key;

	/* one process, and one address space of it, after the other: resolvers follow along */
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->exec_gen != y->exec_gen)
		return x->exec_gen < y->exec_gen ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* A stack of `stacks` into chain[] after a context marker; returns the words written. */
static size_t append_stack(const BucketContext *c, uint64_t hash, uint64_t context,
			   uint64_t *chain)
{
	ProfileBpfStack stack;
	size_t n = 0;

	if (hash == 0 || bpf_map__lookup_elem(c->skel->maps.stacks, &hash, sizeof(hash), &stack,
					      sizeof(stack), 0) < 0)
		return 0;
	chain[n++] = context;
	for (size_t i = 0; i < PROFILE_BPF_STACK_DEPTH && stack.ips[i] != 0; i++)
		chain[n++] = stack.ips[i];
	return n > 1 ? n : 0;
}

/*
 * Did the frame-pointer walk stop before the process's first frame? It did
 * when it filled the stack entry, and when its outermost address is not code
 * of the process: code without frame pointers leaves the walk on a "return
 * address" read from a random slot.
 */
static bool user_walk_truncated(const uint64_t *user, size_t n, const ProcessMaps *maps)
{
	const ProcessMapping *m;

	if (n == 0)
		return false;
	if (n >= PROFILE_BPF_STACK_DEPTH)
		return true;
	m = process_maps_find(maps, user[n - 1]);
	return !m || !(m->prot & PROT_EXEC);
}

/*
 * A thread met for the first time: named for the consumer by a COMM record
 * when the records gave it no name (it never renamed itself), from /proc.
 */
static int name_thread(const BucketContext *c, TargetProcess *p, uint32_t tid)
{
	PerfRecord comm_rec = { .type = PERF_RECORD_COMM };
	char comm[16];
	int r;

	if (target_process_thread_name(p, tid) || task_read_comm((pid_t)p->pid, (pid_t)tid, comm) < 0)
		return 0;
	r = perf_synth_comm(c->out->format, p->pid, tid, comm, c->out->time, c->rec);
	if (r >= 0)
		r = c->out->emit(c->out->userdata, &c->rec->header);
	if (r < 0)
		return r;
	comm_rec.comm = (PerfRecordComm){ .pid = p->pid, .tid = tid, .comm = comm };
	return process_table_apply(c->processes, &comm_rec);
}

static int emit_bucket(const BucketContext *c, const Bucket *b)
{
	uint64_t chain[2 * (PROFILE_BPF_STACK_DEPTH + 1)];
	BpfBucketStats *st = c->stats;
	TargetProcess *p, *known = process_table_find(c->processes, b->key.tgid);
	size_t n_kernel = 0, n_user;
	PerfSample sample;
	int r;

	r = process_table_get(c->processes, b->key.tgid, &p);
	if (r < 0)
		return r;
	if (p->excluded) {
		st->samples_excluded += b->count;
		return tid_set_add(&st->processes_excluded, p->pid) < 0 ? -ENOMEM : 0;
	}
	if (!known) {
		r = c->out->emit_process(c->out->userdata, p);
		if (r < 0)
			return r;
	}
	r = tid_set_add(&st->threads_seen, b->key.tid);
	if (r > 0)
		r = name_thread(c, p, b->key.tid);
	if (r < 0 || tid_set_add(&st->processes_seen, p->pid) < 0)
		return r < 0 ? r : -ENOMEM;

	if (c->out->kernel)
		n_kernel = append_stack(c, b->key.kernel_stack, PERF_CONTEXT_KERNEL, chain);
	n_user = append_stack(c, b->key.user_stack, PERF_CONTEXT_USER, chain + n_kernel);
	/* a stack the program could not store is a sample without its user frames */
	if (b->key.lost & PROFILE_BPF_LOST_USER)
		st->lost_user_stacks += b->count;
	if (n_user > 0 && user_walk_truncated(chain + n_kernel + 1, n_user - 1,
					      target_process_space(p, b->key.exec_gen)))
		st->truncated_stacks += b->count;
	sample = (PerfSample){
		.pid = b->key.tgid,
		.tid = b->key.tid,
		.time = c->out->time,
		.ip = n_kernel ? chain[1] : n_user ? chain[n_kernel + 1] : 0,
		.kernel_mode = n_kernel > 0,
		.n_callchain = n_kernel + n_user,
		.callchain = chain,
		.weight = b->count,
		.addr = b->key.exec_gen,
	};
	r = perf_synth_sample(c->out->format, &sample, c->rec);
	if (r >= 0)
		r = c->out->emit(c->out->userdata, &c->rec->header);
	if (r < 0)
		return r;
	st->samples_captured += b->count;
	return 0;
}

int bpf_buckets_emit(struct profile_bpf *skel, ProcessTable *processes, const BpfBucketOutput *out,
		     BpfBucketStats *stats)
{
	_cleanup_free_ PerfSynthRecord *rec = malloc(sizeof(*rec));
	_cleanup_free_ Bucket *buckets = NULL;
	const BucketContext c = {
		.skel = skel,
		.processes = processes,
		.out = out,
		.stats = stats,
		.rec = rec,
	};
	size_t n;
	int r;

	if (!rec)
		return -ENOMEM;
	r = read_buckets(skel, &buckets, &n);
	if (r < 0)
		return r;
	stats->buckets += n;
	if (n > 1)
		qsort(buckets, n, sizeof(Bucket), bucket_compare);
	for (size_t i = 0; i < n; i++) {
		r = emit_bucket(&c, &buckets[i]);
		if (r < 0)
			return r;
	}
	return 0;
}
