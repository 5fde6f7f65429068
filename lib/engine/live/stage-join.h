/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The join of a live run: each sample of the profile is attributed to the
 * innermost stage span active on its thread at its time (of several that
 * overlap, the one that began last) and to the macro state the program was
 * in at that time (its latest transition). The profile gets the labels
 * "stage" and "state" on its samples and one marker per stage span; the
 * StageJoin counts samples and the hottest functions per stage and per state.
 */

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "span-log.h"

/* Hottest functions listed per stage or state. */
#define STAGE_JOIN_HOTTEST 5

typedef struct HotFrame {
	uint32_t function; /* profile string */
	uint32_t module;   /* profile string, or PROFILE_NONE */
	uint64_t samples;  /* samples with it as their leaf (self) */
} HotFrame;

typedef struct JoinGroup {
	uint64_t samples;
	HotFrame hottest[STAGE_JOIN_HOTTEST];
	size_t n_hottest;
} JoinGroup;

typedef struct StageJoin {
	uint64_t n_samples;       /* all samples of the profile */
	JoinGroup stages[_STAGE_MAX];
	JoinGroup unstaged;       /* samples in no stage span */
	/* per transition of the log: the samples while it was the latest one */
	JoinGroup states[SPAN_RING_TRANSITIONS];
	size_t n_states;
	JoinGroup stateless;      /* samples before the first transition */
	uint64_t markers;         /* stage spans that became markers (inside the window) */
} StageJoin;

/*
 * Join 'log' into 'p' (labels, markers) and count into *ret. 'start_mono' is
 * the CLOCK_MONOTONIC time of the profile's time 0. -EBUSY when the profile
 * is labelled already.
 */
int stage_join(Profile *p, const SpanLog *log, uint64_t start_mono, StageJoin *ret);
