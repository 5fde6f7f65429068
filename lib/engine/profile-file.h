/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A Profile as a compact file of its own: what a finished session keeps (the
 * exports are made from it when first asked for), and what the sandboxed
 * unwinder hands back to profd. Little-endian, in tagged sections (header,
 * strings, frames, stacks, samples, threads; unknown tags are skipped, so
 * newer writers may add sections), a CRC-32 of everything at the end.
 *
 * The parser treats its input as hostile: every count is checked against
 * the bytes there before anything is allocated, every reference against what
 * it names (a stack's parent must come before it), strings hold no NUL, and
 * the result is rebuilt through the Profile API, so it is a valid Profile
 * whatever the input was. -EBADMSG names no more than that the file is bad.
 */

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* The bytes of 'p' in the file format; free() them. */
int profile_file_serialise(const Profile *p, uint8_t **ret_data, size_t *ret_size);
/* Write it to 'fd' (the caller's: not closed, not synced). */
int profile_file_write_fd(const Profile *p, int fd);

/* Parse 'data'; -EBADMSG when it is not a valid profile file, -ENOMEM. */
int profile_file_parse(const uint8_t *data, size_t size, Profile **ret);
