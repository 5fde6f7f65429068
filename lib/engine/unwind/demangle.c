/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "demangle.h"

#include <stddef.h>
#include <string.h>

/* From libstdc++ (cxxabi.h is C++ only); the engine links libstdc++ for it. */
char *__cxa_demangle(const char *mangled_name, char *output_buffer, size_t *length, int *status);

char *symbol_demangle(const char *name)
{
	int status = 0;
	char *s;

	/* Itanium ABI names start with _Z; anything else would be demangled as a type. */
	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	s = __cxa_demangle(name, NULL, NULL, &status);
	return status == 0 ? s : NULL;
}
