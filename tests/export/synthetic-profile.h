/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Synthetic profiles for the export tests, built through the Profile API the
 * unwinder uses. Deterministic: the same kind always gives the same profile.
 */

#include <stdint.h>

#include "profile.h"

typedef enum SyntheticKind {
	/* inline frames, kernel frames, same names on different lines, names with
	 * ';', spaces, XML specials and unicode, 40 threads, some empty stacks */
	SYNTHETIC_MIXED,
	/* SYNTHETIC_MIXED plus names with line breaks and bytes that are not UTF-8 */
	SYNTHETIC_HOSTILE,
	/* n_samples random samples over about n_stacks distinct stacks */
	SYNTHETIC_RANDOM,
	/* SYNTHETIC_MIXED's stacks in three processes (one without a name) of a unit, with
	 * threads of the same name in two of them, and no sample times (as bpf records them) */
	SYNTHETIC_PROCESSES,
} SyntheticKind;

int synthetic_profile(SyntheticKind kind, size_t n_samples, uint32_t n_stacks, uint64_t seed,
		      Profile **ret);
