/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A .debug_aranges section read directly: each unit's address ranges as
 * (low, high, unit offset), sorted by low. libdw's dwarf_getaranges() reads
 * the same section but also looks up each set's unit, which makes libdw read
 * the header of every unit of the file: ~1.6 ms for libc, paid by every new
 * unwinder (each restart) the first time it names a libc address. With the
 * unit's offset, dwarf_offdie() reads only the headers up to that unit.
 */

#include <stddef.h>
#include <stdint.h>

typedef struct DebugArange {
	uint64_t low, high; /* [low, high), DWARF addresses (before the module's bias) */
	uint64_t unit;      /* offset of the unit's header in .debug_info */
} DebugArange;

/*
 * Parse the section's bytes, in the host's byte order (the caller checks the
 * file's). Empty ranges are kept, as libdw keeps them. -EBADMSG for a malformed section (what
 * it says is not read further), -ENOMEM.
 */
int debug_aranges_parse(const void *data, size_t size, DebugArange **ret, size_t *ret_n);
