/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-profile-file: the compact profile file parser, which reads what the
 * sandboxed unwinder hands back and what the state directory holds. Each
 * input is tried as it is and with its CRC made valid (so the fuzzer gets
 * past the checksum to the sections). Whatever parses must serialise, parse
 * again to the same bytes, and export.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cleanup.h"
#include "export.h"
#include "profile-file.h"

static void check(const uint8_t *data, size_t size)
{
	_cleanup_profile_ Profile *p = NULL, *q = NULL;
	_cleanup_free_ uint8_t *out = NULL, *again = NULL;
	_cleanup_free_ char *folded = NULL;
	size_t n, n_again, n_folded;

	if (profile_file_parse(data, size, &p) < 0)
		return;
	if (profile_file_serialise(p, &out, &n) < 0 || profile_file_parse(out, n, &q) < 0)
		abort();
	if (profile_file_serialise(q, &again, &n_again) < 0 || n != n_again ||
	    memcmp(out, again, n) != 0)
		abort();
	if (export_profile_to_memory(q, EXPORT_FOLDED, &folded, &n_folded) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ uint8_t *fixed = malloc(size + 4);
	uint32_t crc;

	check(data, size);
	if (!fixed)
		return 0;
	memcpy(fixed, data, size);
	crc = (uint32_t)crc32(0, data, (uInt)size);
	for (int i = 0; i < 4; i++)
		fixed[size + i] = (uint8_t)(crc >> (8 * i));
	check(fixed, size + 4);
	return 0;
}
