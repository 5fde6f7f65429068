/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tid-set.h"

#include <errno.h>
#include <stdlib.h>

static size_t tid_slot(uint32_t tid, size_t mask)
{
	return (size_t)((tid * 0x9e3779b1U) & mask);
}

static int tid_set_grow(TidSet *s)
{
	size_t n = s->slots ? (s->mask + 1) * 2 : 64;
	uint32_t *slots = calloc(n, sizeof(uint32_t));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; s->slots && i <= s->mask; i++) {
		uint32_t tid = s->slots[i];
		size_t j;

		if (tid == 0)
			continue;
		for (j = tid_slot(tid, n - 1); slots[j] != 0; j = (j + 1) & (n - 1))
			;
		slots[j] = tid;
	}
	free(s->slots);
	s->slots = slots;
	s->mask = n - 1;
	return 0;
}

bool tid_set_contains(const TidSet *s, uint32_t tid)
{
	if (!s->slots || tid == 0)
		return false;
	for (size_t j = tid_slot(tid, s->mask); s->slots[j] != 0; j = (j + 1) & s->mask)
		if (s->slots[j] == tid)
			return true;
	return false;
}

int tid_set_add(TidSet *s, uint32_t tid)
{
	size_t j;

	if (tid == 0)
		return -EINVAL;
	if (tid_set_contains(s, tid))
		return 0;
	/* keep the load under one half so probes stay short */
	if (!s->slots || (s->count + 1) * 2 > s->mask + 1) {
		int r = tid_set_grow(s);
		if (r < 0)
			return r;
	}
	for (j = tid_slot(tid, s->mask); s->slots[j] != 0; j = (j + 1) & s->mask)
		;
	s->slots[j] = tid;
	s->count++;
	return 1;
}

void tid_set_clear(TidSet *s)
{
	free(s->slots);
	*s = (TidSet){};
}
