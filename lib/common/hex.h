/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Lower-case hex of bytes (build-ids, digests). */

#include <stddef.h>
#include <stdint.h>

#define HEX_ENCODED_SIZE(n) (2 * (n) + 1)

/* Writes 2n digits and a NUL into ret (HEX_ENCODED_SIZE(n) bytes). */
static inline char *hex_encode(const void *data, size_t n, char *ret)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = data;

	for (size_t i = 0; i < n; i++) {
		ret[2 * i] = digits[p[i] >> 4];
		ret[2 * i + 1] = digits[p[i] & 0xf];
	}
	ret[2 * n] = '\0';
	return ret;
}
