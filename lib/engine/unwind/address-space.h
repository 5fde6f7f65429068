/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One libdwfl session (Dwfl) per target address space, kept across samples:
 * its modules are the target's mapped ELF files (and the vDSO), reported from
 * ProcessMaps and refreshed only when the executable file mappings really
 * changed. libdwfl caches each module's ELF, CFI and DWARF, so this is where
 * the cost of unwinding and naming is amortised.
 */

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "cu-index.h"
#include "process-maps.h"
#include "symbol-cache.h"

typedef struct ModuleInfo {
	char *path;          /* as mapped ("[vdso]" for the vDSO) */
	char *build_id;      /* lower-case hex, or NULL */
	const char *key;     /* SymbolCache key: the build-id, else the path */
	uint64_t base;       /* where the file's first segment is mapped */
	uint64_t start, end; /* the module's address range */
	uint64_t bias;       /* absolute address - ELF address */
	CuIndex *cu_index;   /* built when libdw cannot find a unit by itself */
	bool cu_index_built;
} ModuleInfo;

typedef struct AddressSpace AddressSpace;

/*
 * 'debuginfo_path' in libdwfl's syntax (NULL: "-:.debug:/usr/lib/debug"): where
 * separate debug info is looked up by build-id (DIR/.build-id/xx/yyyy.debug)
 * and by .gnu_debuglink. Module keys are interned in 'cache'.
 */
int address_space_new(const char *debuginfo_path, SymbolCache *cache, AddressSpace **ret);
AddressSpace *address_space_free(AddressSpace *s);

/* Follow 'maps'. Returns 1 when the module list changed, 0 when not, or a negative errno. */
int address_space_update(AddressSpace *s, const ProcessMaps *maps);
Dwfl *address_space_get_dwfl(AddressSpace *s);

/* The module covering 'addr', or NULL. */
Dwfl_Module *address_space_find(AddressSpace *s, uint64_t addr, ModuleInfo **ret_info);

/* Read 8 bytes of a module's file-backed image at 'addr' (for CFI that reads memory). */
bool address_space_read_word(AddressSpace *s, uint64_t addr, uint64_t *ret);
