/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A SymbolModule as bytes, for the on-disk symbol cache (DESIGN.md §8
 * "Caches"): its identity, whether a session resolved it, every location's
 * frames and its unwind table, with a checksum. Reading checks everything it
 * relies on and refuses (-EBADMSG) a file of another module, another
 * version, or one cut short or damaged; a refused file loses nothing but
 * time.
 */

#include <stddef.h>

#include "symbol-cache.h"

int symbol_module_serialize(SymbolModule *m, char **ret_data, size_t *ret_size);
/* Fill 'm' (of the identity the data was written for) with what 'data' holds. */
int symbol_module_deserialize(SymbolModule *m, const void *data, size_t size);
