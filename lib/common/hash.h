/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The hashing every table shares: FNV-1a over bytes, and a splitmix64 finaliser
 * to spread keys whose low bits alone would cluster (pointers, addresses, ids).
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
