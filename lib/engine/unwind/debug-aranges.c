/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "debug-aranges.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "sorted.h"

DEFINE_RADIX_SORT(radix_sort_by_low, DebugArange, item->low)

typedef struct Reader {
	const uint8_t *p;
	size_t off, end;
} Reader;

/* An unsigned number of 'size' bytes (1, 2, 4 or 8) in host order; false past the end. */
static bool read_uint(Reader *r, unsigned size, uint64_t *ret)
{
	uint8_t b1;
	uint16_t b2;
	uint32_t b4;

	if (r->end - r->off < size)
		return false;
	switch (size) {
	case 1:
		memcpy(&b1, r->p + r->off, 1);
		*ret = b1;
		break;
	case 2:
		memcpy(&b2, r->p + r->off, 2);
		*ret = b2;
		break;
	case 4:
		memcpy(&b4, r->p + r->off, 4);
		*ret = b4;
		break;
	default:
		memcpy(ret, r->p + r->off, 8);
		break;
	}
	r->off += size;
	return true;
}

typedef struct Ranges {
	DebugArange *a;
	size_t n, allocated;
} Ranges;

/* One set (DWARF 5 §6.1.2): its header, then (address, length) pairs up to (0, 0). */
static int parse_set(const uint8_t *data, size_t size, size_t *off, Ranges *out)
{
	Reader r = { .p = data, .off = *off, .end = size };
	uint64_t length, version, unit, address_size, segment_size;
	unsigned offset_size = 4;
	size_t set = *off, tuple;

	if (!read_uint(&r, 4, &length))
		return -EBADMSG;
	if (length == 0xffffffff) {
		offset_size = 8;
		if (!read_uint(&r, 8, &length))
			return -EBADMSG;
	} else if (length >= 0xfffffff0)
		return -EBADMSG;
	if (length > size - r.off)
		return -EBADMSG;
	r.end = r.off + length;
	*off = r.end;
	if (!read_uint(&r, 2, &version) || version != 2 || !read_uint(&r, offset_size, &unit) ||
	    !read_uint(&r, 1, &address_size) || !read_uint(&r, 1, &segment_size) ||
	    (address_size != 4 && address_size != 8) || segment_size != 0)
		return -EBADMSG;
	/* the first pair is aligned to its own size, counted from the set's start */
	tuple = 2 * address_size;
	r.off = set + (r.off - set + tuple - 1) / tuple * tuple;
	if (r.off > r.end)
		return -EBADMSG;
	for (;;) {
		uint64_t low, len;

		if (!read_uint(&r, (unsigned)address_size, &low) ||
		    !read_uint(&r, (unsigned)address_size, &len))
			return -EBADMSG; /* no end marker */
		if (low == 0 && len == 0)
			return 0;
		if (len > UINT64_MAX - low)
			return -EBADMSG;
		if (ARRAY_RESERVE(out->a, out->allocated, out->n + 1, 256) < 0)
			return -ENOMEM;
		out->a[out->n++] = (DebugArange){ .low = low, .high = low + len, .unit = unit };
	}
}

int debug_aranges_parse(const void *data, size_t size, DebugArange **ret, size_t *ret_n)
{
	_cleanup_free_ DebugArange *tmp = NULL;
	Ranges out = {};
	size_t off = 0;
	int r = 0;

	while (off < size && r >= 0)
		r = parse_set(data, size, &off, &out);
	if (r >= 0 && out.n > 1) {
		tmp = malloc(out.n * sizeof(DebugArange));
		if (!tmp)
			r = -ENOMEM;
		else
			radix_sort_by_low(out.a, tmp, out.n);
	}
	if (r < 0) {
		free(out.a);
		return r;
	}
	*ret = out.a;
	*ret_n = out.n;
	return 0;
}
