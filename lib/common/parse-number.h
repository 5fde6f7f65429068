/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * A decimal number spelled with digits only — no sign, space or base prefix —
 * filling all of 's'. 0, -EINVAL when it is not one, -ERANGE above UINT64_MAX;
 * *ret untouched on failure.
 */
static inline int parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno != 0)
		return -ERANGE;
	*ret = v;
	return 0;
}
