/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Reading a byte buffer front to back without ever reading past its end:
 * every read says whether the bytes were there.
 */
typedef struct ByteReader {
	const uint8_t *p, *end;
} ByteReader;

static inline ByteReader byte_reader(const void *data, size_t size)
{
	return (ByteReader){ .p = data, .end = (const uint8_t *)data + size };
}

static inline size_t byte_reader_left(const ByteReader *r)
{
	return (size_t)(r->end - r->p);
}

/* Copy 'n' bytes out; false (nothing consumed) when fewer are left. */
static inline bool byte_reader_copy(ByteReader *r, void *out, size_t n)
{
	if (byte_reader_left(r) < n)
		return false;
	memcpy(out, r->p, n);
	r->p += n;
	return true;
}

/* Point at the next 'n' bytes and consume them; NULL when fewer are left. */
static inline const void *byte_reader_take(ByteReader *r, size_t n)
{
	const uint8_t *p = r->p;

	if (byte_reader_left(r) < n)
		return NULL;
	r->p += n;
	return p;
}

#define BYTE_READER_GET(r, var) byte_reader_copy((r), &(var), sizeof(var))
