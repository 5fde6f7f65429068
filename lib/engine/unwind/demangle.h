/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * C++ symbol demangling through libstdc++'s __cxa_demangle, the same
 * demangler perf and gdb use for g++ and clang++ output.
 */

/* A malloc'ed demangled name, or NULL when 'name' is not a mangled C++ name. */
char *symbol_demangle(const char *name);
