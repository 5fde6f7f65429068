/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tid-set.h"

#include <errno.h>

/* Tids come in runs; a multiplicative hash spreads a run over the low bits. */
static uint64_t tid_hash(const void *userdata, uint32_t tid)
{
	(void)userdata;
	return tid * 0x9e3779b1U;
}

static bool tid_equal(const void *userdata, uint32_t tid)
{
	return tid == *(const uint32_t *)userdata;
}

static bool tid_find(const TidSet *s, uint32_t tid, uint32_t *ret_slot)
{
	return s->slots && id_table_find(s, tid_hash(NULL, tid), tid_equal, &tid, ret_slot);
}

bool tid_set_contains(const TidSet *s, uint32_t tid)
{
	uint32_t slot;

	return tid_find(s, tid, &slot);
}

int tid_set_add(TidSet *s, uint32_t tid)
{
	uint32_t slot;
	int r;

	if (tid == 0 || tid == ID_TABLE_EMPTY)
		return -EINVAL;
	r = id_table_reserve(s, 1, tid_hash, NULL);
	if (r < 0)
		return r;
	if (tid_find(s, tid, &slot))
		return 0;
	id_table_insert(s, slot, tid);
	return 1;
}

bool tid_set_remove(TidSet *s, uint32_t tid)
{
	uint32_t slot;

	if (!tid_find(s, tid, &slot))
		return false;
	id_table_remove(s, slot, tid_hash, NULL);
	return true;
}

void tid_set_clear(TidSet *s)
{
	id_table_done(s);
}
