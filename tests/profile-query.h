/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a test asks of a Profile: samples by process and function, process names. */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "profile.h"

/* Does the stack of sample s hold a frame named 'function'? */
static inline bool sample_has_function(const Profile *p, const ProfileSample *s,
				       const char *function)
{
	for (uint32_t n = s->stack; n != PROFILE_NONE; n = p->stacks[n].parent)
		if (strcmp(profile_string(p, p->frames[p->stacks[n].frame].function), function) == 0)
			return true;
	return false;
}

/* Samples of process 'pid' (0: any) with a frame named 'function' (NULL: any). */
static inline uint64_t count_samples(const Profile *p, uint32_t pid, const char *function)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		const ProfileSample *s = &p->samples[i];

		if (pid && profile_thread_pid(p, s->tid) != pid)
			continue;
		if (!function || sample_has_function(p, s, function))
			n++;
	}
	return n;
}

/* The recorded name of a process of a multi-process profile, or NULL. */
static inline const char *process_name(const Profile *p, uint32_t pid)
{
	const ProfileProcess *proc = profile_find_process(p, pid);

	return proc && proc->name != PROFILE_NONE ? profile_string(p, proc->name) : NULL;
}
