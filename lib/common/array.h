/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdlib.h>

/*
 * Room for at least 'need' elements of 'size' bytes in the heap array *array
 * of capacity *allocated, growing it by doubling from 'initial'. Returns 0 or
 * -ENOMEM (the array and capacity unchanged). ARRAY_RESERVE() takes the
 * array variable itself.
 */
static inline int array_reserve(void **array, size_t *allocated, size_t need, size_t size,
				size_t initial)
{
	size_t a = *allocated ? *allocated : initial;
	void *p;

	if (need <= *allocated)
		return 0;
	while (a < need)
		a *= 2;
	p = reallocarray(*array, a, size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*allocated = a;
	return 0;
}

#define ARRAY_RESERVE(array, allocated, need, initial) \
	array_reserve((void **)&(array), &(allocated), (need), sizeof(*(array)), (initial))
