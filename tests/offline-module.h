/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* An ELF file opened alone with libdwfl, as a module at its link-time addresses. */

#include <elfutils/libdwfl.h>
#include <errno.h>

static const Dwfl_Callbacks offline_module_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* 'path' as the one module of a new Dwfl; the caller ends *ret_dwfl. libdwfl's error on failure. */
static inline int offline_module_open(const char *path, Dwfl **ret_dwfl, Dwfl_Module **ret_module)
{
	Dwfl *dwfl = dwfl_begin(&offline_module_callbacks);
	Dwfl_Module *mod;

	if (!dwfl)
		return -ENOMEM;
	mod = dwfl_report_offline(dwfl, path, path, -1);
	if (!mod || dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dwfl_end(dwfl);
		return -EINVAL;
	}
	*ret_dwfl = dwfl;
	*ret_module = mod;
	return 0;
}
