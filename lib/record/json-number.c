/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "json-number.h"

#define MARKER "profd-int:"
#define MARKER_LEN (sizeof(MARKER) - 1)
/* How a marker is written in JSON text, before the literal and its closing quote. */
#define MARKER_JSON "\"\\u0000" MARKER

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the JSON number token at s (0 if malformed) and whether it is a plain integer. */
static size_t number_token(const char *s, size_t n, bool *ret_integer)
{
	size_t i = 0, digits_start;
	bool integer = true;

	if (i < n && s[i] == '-')
		i++;
	digits_start = i;
	while (i < n && is_digit(s[i]))
		i++;
	if (i == digits_start || (s[digits_start] == '0' && i - digits_start > 1))
		return 0;
	if (i < n && s[i] == '.') {
		integer = false;
		i++;
		while (i < n && is_digit(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		integer = false;
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		while (i < n && is_digit(s[i]))
			i++;
	}
	*ret_integer = integer;
	return i;
}

/* Whether an integer literal is outside jansson's int64 range. */
static bool integer_too_big(const char *s, size_t n)
{
	bool negative = s[0] == '-';
	const char *limit = negative ? "9223372036854775808" : "9223372036854775807";
	size_t digits = n - negative;

	if (digits != strlen(limit))
		return digits > strlen(limit);
	return memcmp(s + negative, limit, digits) > 0;
}

static bool is_nul_escape(const char *s, size_t n)
{
	return n >= 6 && s[0] == '\\' && s[1] == 'u' && memcmp(s + 2, "0000", 4) == 0;
}

int json_mark_big_integers(const char *json, size_t len, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *out = NULL;
	size_t out_len = 0, copied = 0, out_size = 0;
	bool in_string = false, nul_escape = false;

	for (size_t i = 0; i < len;) {
		bool integer;
		size_t n;

		if (in_string) {
			if (json[i] == '\\') {
				nul_escape |= is_nul_escape(json + i, len - i);
				i += 2;
			} else {
				in_string = json[i] != '"';
				i++;
			}
			continue;
		}
		if (json[i] == '"') {
			in_string = true;
			i++;
			continue;
		}
		if (json[i] != '-' && !is_digit(json[i])) {
			i++;
			continue;
		}
		n = number_token(json + i, len - i, &integer);
		if (n == 0) {
			i++; /* malformed: leave it to jansson to refuse */
			continue;
		}
		if (integer && integer_too_big(json + i, n)) {
			size_t need = out_len + (i - copied) + strlen(MARKER_JSON) + n + 2;

			if (need > out_size) {
				size_t size = need + len / 4 + 64;
				char *p = realloc(out, size);

				if (!p)
					return -ENOMEM;
				out = p;
				out_size = size;
			}
			memcpy(out + out_len, json + copied, i - copied);
			out_len += i - copied;
			memcpy(out + out_len, MARKER_JSON, strlen(MARKER_JSON));
			out_len += strlen(MARKER_JSON);
			memcpy(out + out_len, json + i, n);
			out_len += n;
			out[out_len++] = '"';
			copied = i + n;
		}
		i += n;
	}
	if (!out) {
		*ret = NULL;
		return 0;
	}
	if (nul_escape)
		return -EBADMSG;
	{
		char *p = realloc(out, out_len + (len - copied) + 1);

		if (!p)
			return -ENOMEM;
		out = p;
	}
	memcpy(out + out_len, json + copied, len - copied);
	out_len += len - copied;
	out[out_len] = '\0';
	*ret_len = out_len;
	*ret = TAKE_PTR(out);
	return 1;
}

const char *json_big_integer_text(const json_t *v)
{
	const char *s;

	if (!json_is_string(v) || json_string_length(v) < 1 + MARKER_LEN)
		return NULL;
	s = json_string_value(v);
	if (s[0] != '\0' || memcmp(s + 1, MARKER, MARKER_LEN) != 0)
		return NULL;
	return s + 1 + MARKER_LEN;
}

json_t *json_u64_new(uint64_t v)
{
	char marked[1 + MARKER_LEN + 21];
	int n;

	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	n = snprintf(marked, sizeof(marked), "%c" MARKER "%" PRIu64, '\0', v);
	return json_stringn(marked, (size_t)n);
}

/*
 * Shortest digits that read back as v, which is what ryu finds: the correctly
 * rounded %.*e with the fewest digits that round-trips. Round-tripping is
 * monotonic in the digit count (p digits are also p+1 digits with a trailing
 * zero, and rounding to p+1 is at least as close), so binary search it.
 */
static void shortest_digits(double v, char digits[static 18], int *ret_exponent)
{
	char buf[40];
	int lo = 0, hi = 16;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		snprintf(buf, sizeof(buf), "%.*e", mid, v);
		if (strtod(buf, NULL) == v)
			hi = mid;
		else
			lo = mid + 1;
	}
	snprintf(buf, sizeof(buf), "%.*e", hi, v);
	/* buf is "d[.ddd]e[+-]xx" */
	{
		size_t n = 0;
		char *e = strchr(buf, 'e');

		for (char *c = buf; c < e; c++)
			if (is_digit(*c))
				digits[n++] = *c;
		while (n > 1 && digits[n - 1] == '0')
			n--;
		digits[n] = '\0';
		*ret_exponent = atoi(e + 1);
	}
}

size_t json_format_f64(double v, char buf[static JSON_FLOAT_MAX])
{
	char digits[18];
	int exponent, length, kk;
	size_t i = 0;

	if (signbit(v)) {
		buf[i++] = '-';
		v = -v;
	}
	if (v == 0) {
		memcpy(buf + i, "0.0", 4);
		return i + 3;
	}
	shortest_digits(v, digits, &exponent);
	length = (int) strlen(digits);
	kk = exponent + 1; /* 10^(kk-1) <= v < 10^kk */

	if (length <= kk && kk <= 16) {
		/* 1234e7 -> 12340000000.0 */
		memcpy(buf + i, digits, (size_t) length);
		i += (size_t) length;
		for (int z = length; z < kk; z++)
			buf[i++] = '0';
		buf[i++] = '.';
		buf[i++] = '0';
	} else if (0 < kk && kk <= 16) {
		/* 1234e-2 -> 12.34 */
		memcpy(buf + i, digits, (size_t) kk);
		i += (size_t) kk;
		buf[i++] = '.';
		memcpy(buf + i, digits + kk, (size_t) (length - kk));
		i += (size_t) (length - kk);
	} else if (-5 < kk && kk <= 0) {
		/* 1234e-6 -> 0.001234 */
		buf[i++] = '0';
		buf[i++] = '.';
		for (int z = kk; z < 0; z++)
			buf[i++] = '0';
		memcpy(buf + i, digits, (size_t) length);
		i += (size_t) length;
	} else {
		/* 1e30, 1234e30 -> 1.234e33 */
		buf[i++] = digits[0];
		if (length > 1) {
			buf[i++] = '.';
			memcpy(buf + i, digits + 1, (size_t) length - 1);
			i += (size_t) length - 1;
		}
		i += (size_t) snprintf(buf + i, JSON_FLOAT_MAX - i, "e%d", kk - 1);
	}
	buf[i] = '\0';
	return i;
}
