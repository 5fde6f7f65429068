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
#include "debug-file.h"
#include "process-maps.h"
#include "symbol-cache.h"
#include "symbol-index.h"
#include "target-files.h"

typedef struct ModuleInfo {
	DebugFileSource source; /* first: what libdwfl's find_debuginfo callback gets */
	char *path;          /* as mapped ("[vdso]" for the vDSO) */
	char *build_id;      /* lower-case hex, or NULL */
	SymbolModule *module; /* its names and unwind table; pinned while it is mapped */
	uint64_t base;       /* where the file's first segment is mapped */
	uint64_t start, end; /* the module's address range */
	uint64_t bias;       /* absolute address - ELF address */
	uint64_t inode;      /* the file's identity, as mapped */
	uint32_t dev_major, dev_minor;
	bool fixed;          /* ET_EXEC: at its link addresses, loaded once */
	/* the mapping of its code: [map_start, map_limit) maps the file from map_offset on */
	uint64_t map_start, map_limit, map_offset;
	CuIndex *cu_index;   /* its units (cu-index.h), made on the first address named */
	SymbolIndex *symbol_index; /* built on the first address named */
	uint64_t mapped_for; /* the resolver's profile generation told where it is mapped */
	bool cu_index_built;
	bool symbol_index_built;
	bool naming_failed;  /* its ModuleNaming could not be made: not again this session */
} ModuleInfo;

typedef struct AddressSpace AddressSpace;

/*
 * Every file (mapped ELF files, their debug files) is opened through 'files'
 * (NULL: target_file_opener_default), which must outlive the address space.
 * Modules are pinned in 'cache' by file identity, on behalf of uid 'caller'
 * (symbol-cache.h: which files callers share).
 */
int address_space_new(const TargetFileOpener *files, SymbolCache *cache, uint32_t caller,
		      AddressSpace **ret);
AddressSpace *address_space_free(AddressSpace *s);

/* Follow 'maps'. Returns 1 when the module list changed, 0 when not, or a negative errno. */
int address_space_update(AddressSpace *s, const ProcessMaps *maps);
Dwfl *address_space_get_dwfl(AddressSpace *s);

/*
 * 'addr' as the module holding its code knows it: 'addr' itself, unless it
 * lies in a second mapping of part of a module's file (V8 maps node's
 * embedded builtins again near its heap; an ET_EXEC file cannot be loaded
 * twice), then the module's address of the same file bytes.
 */
uint64_t address_space_translate(const AddressSpace *s, uint64_t addr);

/* The module covering 'addr' (translated already), or NULL. */
Dwfl_Module *address_space_find(AddressSpace *s, uint64_t addr, ModuleInfo **ret_info);

/* A module by the path its file was mapped at, or NULL. */
Dwfl_Module *address_space_find_by_path(AddressSpace *s, const char *path);

/* Read 8 bytes of a module's file-backed image at 'addr' (for CFI that reads memory). */
bool address_space_read_word(AddressSpace *s, uint64_t addr, uint64_t *ret);
