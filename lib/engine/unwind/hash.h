/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The hashing the unwinder's tables share: FNV-1a for strings, a splitmix64 finaliser to spread. */

#include <stdint.h>

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
	h ^= 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return hash_finalize(h);
}
