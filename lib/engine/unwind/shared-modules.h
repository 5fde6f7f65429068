/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The modules of a multi-process target, one per file (device and inode, the
 * vDSO once), shared by all its processes (DESIGN.md §8: "modules shared
 * across the processes of a multi-process target"): a file is opened, its
 * symbols sorted and its debug info read once, however many processes map
 * it, wherever each maps it. A process's address is translated to the module
 * by the file's load base in that process. A ModuleFinder for the frame-pointer
 * StackResolvers of process-resolvers.h; one thread at a time.
 */

#include <stdint.h>

#include "cleanup.h"
#include "stack-resolver.h"

typedef struct SharedModules SharedModules;

/* Files are opened through 'files' and pinned in 'cache' on behalf of uid 'owner'. */
int shared_modules_new(const TargetFileOpener *files, SymbolCache *cache, uint32_t owner,
		       SharedModules **ret);
SharedModules *shared_modules_free(SharedModules *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(SharedModules *, shared_modules_free);

/* ModuleFinder.find; 'userdata' is the SharedModules. */
Dwfl_Module *shared_modules_find(void *userdata, const ProcessMaps *maps, uint64_t addr,
				 ModuleInfo **ret_info, uint64_t *ret_addr);

/* Distinct files opened so far. */
size_t shared_modules_count(const SharedModules *m);
