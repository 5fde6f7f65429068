/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Numbers the way serde_json has them, on top of jansson:
 *  - jansson integers are signed 64-bit, so before parsing, integer literals
 *    outside that range are rewritten into marker strings holding their exact
 *    text ("\0" "profd-int:" TEXT); u64 readers and the serialiser recognise
 *    them, so values up to 2^64-1 round-trip exactly and larger ones are
 *    refused by the field that holds them.
 *  - f64 is printed as serde_json (ryu) does: shortest round-trip digits,
 *    "0.0", "757.7423046314318", "1e30", "1.5e-7".
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JSON_FLOAT_MAX 32

/*
 * Rewrite out-of-range integer literals of json into marker strings. Returns
 * 0 with *ret NULL when nothing needed rewriting, 1 with the rewritten text in
 * *ret / *ret_len, or -EBADMSG when a marker could be forged (the text has a
 * \u0000 escape, which jansson refuses by default anyway).
 */
int json_mark_big_integers(const char *json, size_t len, char **ret, size_t *ret_len);

/* The literal text of a marked integer, or NULL when v is not one. */
const char *json_big_integer_text(const json_t *v);

/*
 * A JSON value for any u64: a jansson integer up to INT64_MAX, a marked integer
 * above (exact when written by json_write(), never capped). NULL on ENOMEM.
 */
json_t *json_u64_new(uint64_t v);

/*
 * Serialise any jansson value as the record serialiser does (record.h:
 * serde_json's compact or pretty layout, marked integers as plain digits,
 * shortest round-trip floats); no trailing newline.
 */
int json_write(const json_t *v, bool pretty, char **ret);

/* f64 as serde_json prints it (finite values only); returns the length. */
size_t json_format_f64(double v, char buf[static JSON_FLOAT_MAX]);
