/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "budget.h"

typedef struct UidUse {
	uid_t uid;
	uint64_t used;
} UidUse;

struct Budget {
	uint64_t limit, quota, users_limit;
	uint64_t used, used_by_users;
	UidUse *uids; /* uids holding something; few at a time */
	size_t n_uids, n_allocated;
};

uint64_t budget_users_limit(uint64_t limit, uint64_t quota)
{
	return limit - (quota < limit / 2 ? quota : limit / 2);
}

int budget_new(uint64_t limit, uint64_t quota, Budget **ret)
{
	Budget *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->limit = limit;
	b->quota = quota;
	b->users_limit = budget_users_limit(limit, quota);
	*ret = b;
	return 0;
}

Budget *budget_free(Budget *b)
{
	if (b) {
		free(b->uids);
		free(b);
	}
	return NULL;
}

static UidUse *find_uid(const Budget *b, uid_t uid)
{
	for (size_t i = 0; i < b->n_uids; i++)
		if (b->uids[i].uid == uid)
			return &b->uids[i];
	return NULL;
}

int budget_charge(Budget *b, uid_t uid, uint64_t n)
{
	UidUse *u = find_uid(b, uid);
	uint64_t mine = u ? u->used : 0;

	if (n > b->limit - b->used)
		return -ENOSPC;
	if (uid != 0) {
		if (n > b->quota || mine > b->quota - n)
			return -EDQUOT;
		if (n > b->users_limit - b->used_by_users)
			return -ENOSPC;
	}
	if (!u) {
		if (ARRAY_RESERVE(b->uids, b->n_allocated, b->n_uids + 1, 8) < 0)
			return -ENOMEM;
		u = &b->uids[b->n_uids++];
		*u = (UidUse){ .uid = uid };
	}
	u->used += n;
	b->used += n;
	if (uid != 0)
		b->used_by_users += n;
	return 0;
}

void budget_release(Budget *b, uid_t uid, uint64_t n)
{
	UidUse *u = find_uid(b, uid);

	if (!u)
		return;
	if (n > u->used)
		n = u->used;
	u->used -= n;
	b->used -= n;
	if (uid != 0)
		b->used_by_users -= n;
	if (u->used == 0)
		*u = b->uids[--b->n_uids];
}

uint64_t budget_used(const Budget *b, uid_t uid)
{
	const UidUse *u;

	if (uid == (uid_t)-1)
		return b->used;
	u = find_uid(b, uid);
	return u ? u->used : 0;
}

uint64_t budget_limit(const Budget *b)
{
	return b->limit;
}

uint64_t budget_quota(const Budget *b)
{
	return b->quota;
}
