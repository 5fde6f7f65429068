/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Per session: lookup address -> the Profile frame ids it expands to (inline
 * frames included, innermost first). The hot path of naming: a sample whose
 * addresses were all seen before costs one probe per frame and no strings.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct LocationCache LocationCache;

int location_cache_new(LocationCache **ret);
LocationCache *location_cache_free(LocationCache *c);
/* Forget everything (the profile or the address space changed). */
void location_cache_clear(LocationCache *c);

/* The ids stored for 'addr'; valid until the next put or clear. */
bool location_cache_get(const LocationCache *c, uint64_t addr, const uint32_t **ret_ids,
			uint32_t *ret_n);
int location_cache_put(LocationCache *c, uint64_t addr, const uint32_t *ids, uint32_t n);
