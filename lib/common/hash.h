/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The hashing every table shares: FNV-1a over bytes, and a splitmix64 finaliser
 * to spread keys whose low bits alone would cluster (pointers, addresses, ids);
 * and a checksum for files of many kilobytes.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HASH_FNV1A_BASIS 0xcbf29ce484222325ULL

static inline uint64_t hash_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static inline uint64_t hash_finalize(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static inline uint64_t hash_combine(uint64_t h, uint64_t v)
{
	return hash_finalize(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

static inline uint64_t hash_string(uint64_t h, const char *s)
{
	return hash_finalize(hash_fnv1a(h ^ HASH_FNV1A_BASIS, s, strlen(s)));
}

/*
 * A checksum of 'len' bytes: FNV-1a's step over 8-byte words in four
 * independent lanes, the lanes and the length combined at the end. Any change
 * of a single word changes its lane's result. FNV-1a over bytes waits on one
 * multiply per byte (~175 us for libc's 177 KB symbol module file, read by
 * every new unwinder); this one ~13 us.
 */
static inline uint64_t hash_checksum(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t lane[4] = { HASH_FNV1A_BASIS, HASH_FNV1A_BASIS ^ 1, HASH_FNV1A_BASIS ^ 2,
			     HASH_FNV1A_BASIS ^ 3 };
	uint64_t h;
	size_t i = 0;

	for (; len - i >= sizeof(lane); i += sizeof(lane))
		for (size_t k = 0; k < 4; k++) {
			uint64_t w;

			memcpy(&w, p + i + k * sizeof(w), sizeof(w));
			lane[k] = (lane[k] ^ w) * 0x100000001b3ULL;
		}
	h = hash_fnv1a(HASH_FNV1A_BASIS, p + i, len - i);
	for (size_t k = 0; k < 4; k++)
		h = hash_combine(h, lane[k]);
	return hash_combine(h, len);
}
