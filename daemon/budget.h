/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One countable resource (file descriptors, requests in progress) shared by
 * every caller: a limit for everyone together and a quota per uid. Root has
 * no quota, only the global limit; so that users can never take all of it,
 * the uids other than root together stop one quota short of the limit (at
 * most half of it), which root keeps (DESIGN.md §8: per-user quotas, root
 * bounded only by the global caps).
 */

#include <stdint.h>
#include <sys/types.h>

typedef struct Budget Budget;

/* How much the uids other than root may hold together, of 'limit' with a per-uid 'quota'. */
uint64_t budget_users_limit(uint64_t limit, uint64_t quota);

int budget_new(uint64_t limit, uint64_t quota, Budget **ret);
Budget *budget_free(Budget *b);

/*
 * Take 'n' for 'uid': 0, or -EDQUOT when it would exceed the uid's quota,
 * -ENOSPC when it would exceed what everyone (or every user but root) may use.
 */
int budget_charge(Budget *b, uid_t uid, uint64_t n);
void budget_release(Budget *b, uid_t uid, uint64_t n);

/* What 'uid' holds, or everyone together for (uid_t)-1. */
uint64_t budget_used(const Budget *b, uid_t uid);
uint64_t budget_limit(const Budget *b);
uint64_t budget_quota(const Budget *b);
