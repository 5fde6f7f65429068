/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The index of the first element of array[0, n), sorted by .field, whose field is above
 * key: the element before it (if any) is the last one at or below key. A macro so each
 * table keeps its own element type and the comparison stays inline on lookup paths.
 */
#define SORTED_UPPER_BOUND(array, n, field, key)                 \
	({                                                       \
		const __typeof__(*(array)) *_sa_ = (array);      \
		__typeof__(_sa_->field) _sk_ = (key);            \
		size_t _lo_ = 0, _hi_ = (n);                     \
		while (_lo_ < _hi_) {                            \
			size_t _mid_ = _lo_ + (_hi_ - _lo_) / 2; \
			if (_sa_[_mid_].field <= _sk_)           \
				_lo_ = _mid_ + 1;                \
			else                                     \
				_hi_ = _mid_;                    \
		}                                                \
		_lo_;                                            \
	})

/*
 * DEFINE_RADIX_SORT(name, type, key) defines
 *     static void name(type *items, type *tmp, size_t n)
 * a stable LSD radix sort of items[0, n) by a 64-bit key, 'key' being an expression
 * of 'item' (a const type *); tmp holds n more. 11-bit digits: the counts fit on the
 * stack and the code stays reentrant. Passes where every item has the same digit
 * are skipped, which for small counts, ranks or one module's addresses is most of them.
 */
#define DEFINE_RADIX_SORT(name, type, key)                                          \
	static void name(type *items, type *tmp, size_t n)                          \
	{                                                                           \
		type *src = items, *dst = tmp;                                      \
                                                                                    \
		for (unsigned shift = 0; n > 0 && shift < 64; shift += 11) {        \
			size_t count[1 << 11] = {}, at = 0, first;                  \
			type *swap;                                                 \
                                                                                    \
			for (size_t i = 0; i < n; i++) {                            \
				const type *item = &src[i];                         \
				count[((key) >> shift) & 0x7ff]++;                  \
			}                                                           \
			{                                                           \
				const type *item = &src[0];                         \
				first = ((key) >> shift) & 0x7ff;                   \
			}                                                           \
			if (count[first] == n)                                      \
				continue;                                           \
			for (size_t d = 0; d < (size_t)1 << 11; d++) {              \
				size_t c = count[d];                                \
                                                                                    \
				count[d] = at;                                      \
				at += c;                                            \
			}                                                           \
			for (size_t i = 0; i < n; i++) {                            \
				const type *item = &src[i];                         \
				dst[count[((key) >> shift) & 0x7ff]++] = src[i];    \
			}                                                           \
			swap = src;                                                 \
			src = dst;                                                  \
			dst = swap;                                                 \
		}                                                                   \
		if (src != items)                                                   \
			memcpy(items, src, n * sizeof(*items));                     \
	}
