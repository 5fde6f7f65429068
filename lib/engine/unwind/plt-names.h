/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Names of PLT entries, as perf gives them ("memcpy@plt"): no symbol covers
 * a PLT stub, yet a library that calls its own exported functions through
 * its PLT (most do) spends samples there. The entry's index picks its
 * relocation in .rela.plt, whose symbol is the function the stub jumps to.
 */

#include <gelf.h>
#include <stdint.h>

/* The function of the PLT entry at ELF address 'addr' of 'elf', or NULL. */
const char *plt_entry_function(Elf *elf, uint64_t addr);
