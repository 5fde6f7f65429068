/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A module's debug info opened once for the life of its SymbolModule instead
 * of once per session: a Dwfl of its own holding only that file, reported
 * from the file the session that first names an unknown address of it maps,
 * its separate debug file found right away through that session's opener
 * (libdwfl keeps what it found and never asks again). Every later session of
 * the same file names its new addresses with it: libdw's DWARF of libc,
 * whose compressed debug sections take ~45 ms to inflate, is read once per
 * unwinder, not once per session that meets a libc instruction not named
 * before. One user at a time (module_naming_lock()).
 */

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

#include "address-space.h"
#include "cleanup.h"

typedef struct ModuleNaming ModuleNaming;

/*
 * For the module 'info' describes (mapped in the session whose opener it
 * carries): -ENOENT for one without a file of its own (the vDSO), -EAGAIN
 * while its debug file is being fetched (debuginfod: a later session gets it).
 */
int module_naming_new(const ModuleInfo *info, ModuleNaming **ret);
ModuleNaming *module_naming_free(ModuleNaming *n);
DEFINE_TRIVIAL_CLEANUP_FUNC(ModuleNaming *, module_naming_free);

/* What its libdw copies hold (the debug sections, inflated). */
size_t module_naming_bytes(const ModuleNaming *n);

/*
 * Did it find DWARF (in the file or a debug file)? One made without is kept
 * all the same; a debug file that comes later is for a module of another
 * identity (address-space.c looks for one in every session).
 */
bool module_naming_has_dwarf(const ModuleNaming *n);

/*
 * Take it: its module, and the ModuleInfo to name with (its bias and CU index;
 * the SymbolModule of the file). Until module_naming_unlock().
 */
Dwfl_Module *module_naming_lock(ModuleNaming *n, ModuleInfo **ret_info);
void module_naming_unlock(ModuleNaming *n);
