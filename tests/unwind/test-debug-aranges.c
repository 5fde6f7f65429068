/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * debug_aranges_parse() on sections built here: 32- and 64-bit sets, the
 * first pair aligned from the set's start, pairs after the end marker ignored,
 * empty ranges kept, sorted across sets; and damaged sections (truncated,
 * a length past the end, a wrong version, address size or segment size, no
 * end marker, a range that wraps) rejected with -EBADMSG, every cut of a
 * valid section included. libdw's own reading is compared on real files in
 * unwind-function-chain.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "debug-aranges.h"
#include "test-util.h"

typedef struct Section {
	uint8_t b[512];
	size_t n;
} Section;

static void put(Section *s, uint64_t v, unsigned size)
{
	memcpy(s->b + s->n, &v, size); /* host order, as the parser reads it */
	s->n += size;
}

/* A set's header (version 2) with 'unit'; returns where its length goes. */
static size_t set_begin(Section *s, bool dwarf64, uint64_t unit, uint8_t address_size)
{
	size_t at = s->n;

	if (dwarf64) {
		put(s, 0xffffffff, 4);
		put(s, 0, 8);
	} else
		put(s, 0, 4);
	put(s, 2, 2);
	put(s, unit, dwarf64 ? 8 : 4);
	put(s, address_size, 1);
	put(s, 0, 1);
	while ((s->n - at) % (2 * address_size))
		put(s, 0xee, 1); /* padding, never read as a pair */
	return at;
}

static void set_end(Section *s, size_t at, bool dwarf64)
{
	if (dwarf64) {
		uint64_t len = s->n - at - 12;

		memcpy(s->b + at + 4, &len, 8);
	} else {
		uint32_t len = (uint32_t)(s->n - at - 4);

		memcpy(s->b + at, &len, 4);
	}
}

static Section valid(void)
{
	Section s = {};
	size_t at;

	at = set_begin(&s, false, 0x40, 8);
	put(&s, 0x3000, 8), put(&s, 0x100, 8);
	put(&s, 0x1000, 8), put(&s, 0x20, 8);
	put(&s, 0, 8), put(&s, 0, 8);
	put(&s, 0x9999, 8), put(&s, 0x10, 8); /* after the end marker: not read */
	set_end(&s, at, false);
	at = set_begin(&s, true, 0x1234, 4);
	put(&s, 0x2000, 4), put(&s, 0x80, 4);
	put(&s, 0x2500, 4), put(&s, 0, 4); /* empty */
	put(&s, 0, 4), put(&s, 0, 4);
	set_end(&s, at, true);
	return s;
}

static void check_valid(void)
{
	static const DebugArange want[] = {
		{ 0x1000, 0x1020, 0x40 },   { 0x2000, 0x2080, 0x1234 }, { 0x2500, 0x2500, 0x1234 },
		{ 0x3000, 0x3100, 0x40 },
	};
	Section s = valid();
	_cleanup_free_ DebugArange *a = NULL;
	size_t n = 0;
	int r;

	r = debug_aranges_parse(s.b, s.n, &a, &n);
	CHECK(r == 0, "valid section: %d", r);
	CHECK(n == sizeof(want) / sizeof(want[0]), "%zu ranges", n);
	for (size_t i = 0; r == 0 && i < n && i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(a[i].low == want[i].low && a[i].high == want[i].high &&
			      a[i].unit == want[i].unit,
		      "range %zu: [0x%llx, 0x%llx) of 0x%llx", i, (unsigned long long)a[i].low,
		      (unsigned long long)a[i].high, (unsigned long long)a[i].unit);

	free(a);
	a = NULL;
	r = debug_aranges_parse(s.b, 0, &a, &n);
	CHECK(r == 0 && n == 0, "empty section: %d, %zu ranges", r, n);
}

/* 'ret' untouched on failure */
static void check_bad(const Section *s, const char *what)
{
	DebugArange *a = (DebugArange *)1;
	size_t n = 77;
	int r = debug_aranges_parse(s->b, s->n, &a, &n);

	CHECK(r == -EBADMSG && a == (DebugArange *)1 && n == 77, "%s: %d", what, r);
}

static void check_damaged(void)
{
	Section s = valid(), t;
	size_t at;

	/* every cut inside the first set or in the second one's */
	for (size_t cut = 1; cut < s.n; cut++) {
		if (cut == 4 + 2 + 4 + 2 + 4 + 16 * 4) /* the first set's end: a valid prefix */
			continue;
		t = s;
		t.n = cut;
		check_bad(&t, "cut section");
	}
	t = s;
	t.b[4] = 3; /* version */
	check_bad(&t, "version 3");
	t = s;
	t.b[4 + 2 + 4] = 2; /* address size */
	check_bad(&t, "address size 2");
	t = s;
	t.b[4 + 2 + 4 + 1] = 1; /* segment size */
	check_bad(&t, "segment size 1");
	t = s;
	t.b[0] = 0xf0, t.b[1] = t.b[2] = t.b[3] = 0xff; /* reserved length */
	check_bad(&t, "reserved length");
	t = s;
	t.b[1] = 0x10; /* length past the end */
	check_bad(&t, "length past the end");

	t = (Section){};
	at = set_begin(&t, false, 0, 8);
	put(&t, 0x1000, 8), put(&t, 0x20, 8);
	set_end(&t, at, false);
	check_bad(&t, "no end marker");

	t = (Section){};
	at = set_begin(&t, false, 0, 8);
	put(&t, UINT64_MAX - 4, 8), put(&t, 0x20, 8);
	put(&t, 0, 8), put(&t, 0, 8);
	set_end(&t, at, false);
	check_bad(&t, "wrapping range");
}

int main(void)
{
	check_valid();
	check_damaged();
	return test_result();
}
