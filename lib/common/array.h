/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Room for at least 'need' elements of 'size' bytes in the heap array *array
 * of capacity *allocated, growing it by doubling from 'initial' up to 'max'
 * elements. Returns 0, -E2BIG when 'need' is above 'max', or -ENOMEM (the
 * array and capacity unchanged on failure).
 */
static inline int array_reserve_max(void **array, size_t *allocated, size_t need, size_t size,
				    size_t initial, size_t max)
{
	size_t a = *allocated ? *allocated : initial;
	void *p;

	if (need <= *allocated)
		return 0;
	if (need > max)
		return -E2BIG;
	while (a < need)
		a = a > max / 2 ? max : a * 2;
	p = reallocarray(*array, a, size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*allocated = a;
	return 0;
}

static inline int array_reserve(void **array, size_t *allocated, size_t need, size_t size,
				size_t initial)
{
	if (need <= *allocated)
		return 0;
	return array_reserve_max(array, allocated, need, size, initial, SIZE_MAX);
}

/* The same for an array whose elements are numbered by uint32_t (a Profile's ids). */
static inline int array_reserve_u32(void **array, uint32_t *allocated, size_t need, size_t size,
				    size_t initial)
{
	size_t a = *allocated;
	int r;

	if (need <= *allocated)
		return 0;
	r = array_reserve_max(array, &a, need, size, initial, UINT32_MAX);
	if (r < 0)
		return r;
	*allocated = (uint32_t)a;
	return 0;
}

/* ARRAY_RESERVE() and ARRAY_RESERVE_U32() take the array variable itself. */
#define ARRAY_RESERVE(array, allocated, need, initial) \
	array_reserve((void **)&(array), &(allocated), (need), sizeof(*(array)), (initial))
#define ARRAY_RESERVE_U32(array, allocated, need, initial) \
	array_reserve_u32((void **)&(array), &(allocated), (need), sizeof(*(array)), (initial))
