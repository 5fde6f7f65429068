/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Separate debug files of a module, found as libdwfl's standard callback
 * finds them — by build-id under the debug directories, by .gnu_debuglink
 * beside the file or under a debug directory, and the dwz file a
 * .gnu_debugaltlink names — but opened only through the TargetFileOpener, and
 * accepted only when the file is the module's: same build-id (or, without
 * one, the debuglink's CRC). libdwfl itself then opens nothing, and asks no
 * debuginfod server on the unwinding path.
 */

#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "target-files.h"

/* What the callback needs of a module: its Dwfl_Module userdata starts with this. */
typedef struct DebugFileSource {
	const TargetFileOpener *files;
	uint32_t pid;       /* the target */
	uint64_t mapped_at; /* an address of the module's mapping, to name it in requests */
	uint64_t inode;     /* and its identity */
	uint32_t dev_major, dev_minor;
	int last_error;     /* of the last debug file request: -EAGAIN while being fetched */
} DebugFileSource;

/* Dwfl_Callbacks.find_debuginfo; the module's userdata must point to a DebugFileSource. */
int debug_file_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		    char **debuginfo_file_name);

/*
 * The debug file debug_file_find() would find for 'mod' now (through
 * src->files), by build-id or .gnu_debuglink: 0 and its stat, -EAGAIN while
 * it is being fetched, or another negative errno (-ENOENT: none).
 */
int debug_file_stat(DebugFileSource *src, Dwfl_Module *mod, struct stat *ret);
