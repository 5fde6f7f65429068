/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "text-escape.h"

#include <stdint.h>

#define REPLACEMENT_CHARACTER "\xef\xbf\xbd"

/* Length of the well-formed UTF-8 sequence at s (RFC 3629), or 0 if there is none. */
static int utf8_length(const unsigned char *s)
{
	uint32_t cp;
	int n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* The n-byte UTF-8 sequence at s, or for n 0 the replacement character; returns what follows. */
static const unsigned char *write_utf8_or_replacement(FILE *f, const unsigned char *s, int n)
{
	if (n == 0) {
		fputs_unlocked(REPLACEMENT_CHARACTER, f);
		return s + 1;
	}
	fwrite_unlocked(s, 1, (size_t)n, f);
	return s + n;
}

void write_json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	putc_unlocked('"', f);
	while (*s) {
		if (*s == '"' || *s == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(*s++, f);
			continue;
		}
		if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s++);
			continue;
		}
		s = write_utf8_or_replacement(f, s, utf8_length(s));
	}
	putc_unlocked('"', f);
}

void write_xml_text(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		switch (*s) {
		case '&':
			fputs_unlocked("&amp;", f);
			s++;
			continue;
		case '<':
			fputs_unlocked("&lt;", f);
			s++;
			continue;
		case '>':
			fputs_unlocked("&gt;", f);
			s++;
			continue;
		case '"':
			fputs_unlocked("&quot;", f);
			s++;
			continue;
		case '\'':
			fputs_unlocked("&apos;", f);
			s++;
			continue;
		}
		/* XML 1.0 has no way to carry most control characters, even escaped. */
		s = write_utf8_or_replacement(f, s, *s < 0x20 ? 0 : utf8_length(s));
	}
}

void write_u64(FILE *f, unsigned long long v)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, buf + sizeof(buf) - p, f);
}
