/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one folding every export is written from (the `folded` format): samples
 * with a non-empty stack, their stacks turned into root-first sequences of
 * function names, counted per sequence, merged and per thread, ordered hottest
 * first and then lexicographically by the name sequence (byte-wise).
 *
 * Different frames may carry the same function name (other lines, other
 * addresses); they fold into one name node: folded stacks are names. Name
 * nodes form a prefix tree like the profile's stack nodes, so a profile stack
 * node maps to its name node once, not once per sample.
 *
 * The folding also keeps what the richer formats need to stay consistent with
 * it: per thread, the counts per profile leaf node (pprof keeps file, line and
 * inline detail) and the counted samples in time order (Firefox timelines).
 *
 * In a multi-process profile (a cgroup, the whole machine) every name sequence
 * starts with its process, "comm-pid" as `stackcollapse-perf.pl --pid` writes it.
 */

#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "profile.h"

typedef struct FoldNode {
	uint32_t parent;   /* name node nearer the root, or PROFILE_NONE */
	uint32_t function; /* profile string id of the name */
	uint32_t frame;    /* first profile frame folded in: module, kernel flag, file;
			    * PROFILE_NONE for the process frame that roots each stack of a
			    * multi-process profile ("comm-pid") */
	uint32_t depth;    /* 1 for a root */
	uint32_t rank;     /* position of this name sequence in lexicographic order */
} FoldNode;

typedef struct FoldCount {
	uint32_t node; /* name node, or profile stack node for FoldThread.leaves */
	uint64_t count;
} FoldCount;

typedef struct FoldThread {
	uint32_t tid;
	uint64_t n_samples;        /* counted samples of this thread */
	const uint32_t *samples;   /* their indexes into Profile.samples, in time order */
	const FoldCount *leaves;   /* counts per profile leaf stack node, by node id */
	size_t n_leaves;
	const FoldCount *stacks;   /* counts per name sequence, hottest first */
	size_t n_stacks;
} FoldThread;

typedef struct Folding {
	const Profile *profile;
	FoldNode *nodes;
	uint32_t n_nodes;
	uint32_t max_depth;
	uint32_t *node_of_stack; /* profile stack node -> name node */
	uint32_t *node_of_rank;  /* name nodes in rank order: a preorder walk, siblings by name */

	FoldCount *stacks; /* merged over threads, hottest first, then lexicographic */
	size_t n_stacks;
	FoldThread *threads; /* threads with counted samples, by tid */
	uint32_t n_threads;

	uint64_t n_samples; /* counted samples (non-empty stacks) */
	uint64_t n_empty;   /* samples skipped for an empty stack */

	/* private: storage behind the FoldThread slices, and the name index while folding */
	uint32_t *sample_order;
	FoldCount *leaf_storage;
	FoldCount *stack_storage;
	uint32_t *leaf_name; /* multi-process: name node (under its process) of each leaf */
	uint32_t nodes_allocated;
	struct IdMap *names;
} Folding;

/* -ENOMEM, or -E2BIG beyond 2^32 - 1 samples. */
int fold_profile(const Profile *p, Folding **ret);
Folding *folding_free(Folding *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(Folding *, folding_free);

/* Fill ret_path[0..depth) with the name nodes from the root to 'node'; returns depth. */
uint32_t fold_node_path(const Folding *f, uint32_t node, uint32_t *ret_path);
