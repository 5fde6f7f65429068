/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Writing frame names into the text formats. Names come from binaries and
 * may hold anything: bytes that are not UTF-8 become U+FFFD in JSON and XML,
 * which both require valid UTF-8.
 */

#include <stdio.h>

/* A JSON string literal, quotes included. */
void write_json_string(FILE *f, const char *s);
/* XML character data or attribute text (quotes escaped too); control characters become U+FFFD. */
void write_xml_text(FILE *f, const char *s);
/* Unsigned decimal, faster than fprintf on hot output loops. */
void write_u64(FILE *f, unsigned long long v);
