/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

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
