/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Text a caller chose (identity strings of records, workload_class, option
 * names, ids): daemon policy on what profd accepts and how it quotes it back
 * (DESIGN.md §8: identity strings length-capped and free of control
 * characters). The record library still parses anything keyhog-profile-v1
 * allows; profd refuses what would make its replies unbounded or put
 * escape sequences on someone's terminal.
 */

#include <stddef.h>

#include "record.h"

/* Longest identity string (run_id, workload_class, source_kind, digests, ...) in bytes. */
#define CALLER_TEXT_MAX 256
/* Longest piece of caller text quoted in an error message or a log line. */
#define CALLER_TEXT_QUOTE_MAX 64

/*
 * 0 when 's' is at most 'max' bytes and has no control character (C0, DEL,
 * or the C1 range U+0080..U+009F); -E2BIG or -EILSEQ otherwise.
 */
int caller_text_check(const char *s, size_t max);

/*
 * Every string of a record's identity checked as above. On refusal
 * *ret_why (caller frees) names the field and the reason.
 */
int record_identity_check(const RunIdentity *identity, char **ret_why);

/*
 * 's' as it may appear in a message: control characters as \xNN, cut to
 * CALLER_TEXT_QUOTE_MAX bytes (at a character boundary) with "..." and the
 * full size appended when longer. Always NUL-terminated in 'buf'.
 */
#define CALLER_TEXT_QUOTE_SIZE (CALLER_TEXT_QUOTE_MAX * 4 + 48)
const char *caller_text_quote(const char *s, char buf[static CALLER_TEXT_QUOTE_SIZE]);

/* Replace control characters in place by '?' (a process name the target chose). */
void caller_text_sanitize(char *s);
