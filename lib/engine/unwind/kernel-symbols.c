/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernel-symbols.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "profile.h"
#include "sorted.h"

typedef struct KernelSymbol {
	uint64_t addr;
	uint32_t name;   /* offset into names */
	uint32_t module; /* offset into names */
} KernelSymbol;

struct KernelSymbols {
	KernelSymbol *symbols;
	size_t n_symbols, allocated;
	char *names; /* NUL-separated; offset 0 is PROFILE_KERNEL_MODULE */
	size_t names_size, names_allocated;
	uint32_t last_module; /* consecutive symbols share their module string */
	char build_id[41];    /* the running kernel's, hex; "" when unknown */
};

/* Symbols this far past the last one are not kernel text any more. */
#define KERNEL_SYMBOL_MAX_SIZE (1U << 20)

static int names_add(KernelSymbols *k, const char *s, size_t len, uint32_t *ret)
{
	if (k->names_size + len + 1 > k->names_allocated) {
		size_t n = k->names_allocated ? k->names_allocated * 2 : 1 << 20;
		char *a;

		while (n < k->names_size + len + 1)
			n *= 2;
		if (n > UINT32_MAX)
			return -E2BIG;
		a = realloc(k->names, n);
		if (!a)
			return -ENOMEM;
		k->names = a;
		k->names_allocated = n;
	}
	memcpy(k->names + k->names_size, s, len);
	k->names[k->names_size + len] = '\0';
	*ret = (uint32_t)k->names_size;
	k->names_size += len + 1;
	return 0;
}

static bool is_text_type(char t)
{
	/* text, weak and (for some module stubs) unknown-section symbols */
	return t && strchr("tTwWiI", t) != NULL;
}

/* "ffffffff81000000 T _stext" or "ffffffffc0a00000 t fn\t[module]" */
static int add_line(KernelSymbols *k, char *line)
{
	char *name, *module, *end;
	uint32_t name_off, module_off = 0;
	uint64_t addr;
	int r;

	addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !is_text_type(end[1]) || end[2] != ' ')
		return 0;
	name = end + 3;
	name[strcspn(name, "\n")] = '\0';
	module = strchr(name, '\t');
	if (module) {
		*module++ = '\0';
		if (k->last_module && strcmp(k->names + k->last_module, module) == 0)
			module_off = k->last_module;
		else {
			r = names_add(k, module, strlen(module), &module_off);
			if (r < 0)
				return r;
			k->last_module = module_off;
		}
	}
	r = names_add(k, name, strlen(name), &name_off);
	if (r < 0)
		return r;
	if (k->n_symbols == k->allocated) {
		size_t n = k->allocated ? k->allocated * 2 : 65536;
		KernelSymbol *a = reallocarray(k->symbols, n, sizeof(KernelSymbol));

		if (!a)
			return -ENOMEM;
		k->symbols = a;
		k->allocated = n;
	}
	k->symbols[k->n_symbols++] = (KernelSymbol){ addr, name_off, module_off };
	return 0;
}

static int symbol_compare(const void *a, const void *b)
{
	const KernelSymbol *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The GNU build-id note among the kernel's ELF notes (/sys/kernel/notes), as hex. */
static void read_build_id(const char *path, char *ret, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char buf[4096];
	ssize_t n;
	size_t off = 0;

	ret[0] = '\0';
	if (fd < 0 || (n = read(fd, buf, sizeof(buf))) < 0)
		return;
	while (off + sizeof(Elf64_Nhdr) <= (size_t)n) {
		Elf64_Nhdr h;
		size_t name_off = off + sizeof(h), desc_off;

		memcpy(&h, buf + off, sizeof(h));
		desc_off = name_off + ((h.n_namesz + 3) & ~3U);
		if (desc_off + h.n_descsz > (size_t)n)
			return;
		if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 &&
		    memcmp(buf + name_off, "GNU", 4) == 0 && h.n_descsz * 2 < size) {
			for (size_t i = 0; i < h.n_descsz; i++)
				sprintf(ret + 2 * i, "%02x", buf[desc_off + i]);
			return;
		}
		off = desc_off + ((h.n_descsz + 3) & ~3U);
	}
}

KernelSymbols *kernel_symbols_free(KernelSymbols *k)
{
	if (!k)
		return NULL;
	free(k->symbols);
	free(k->names);
	free(k);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(KernelSymbols *, kernel_symbols_free);

int kernel_symbols_load(const char *path, KernelSymbols **ret)
{
	_cleanup_(kernel_symbols_freep) KernelSymbols *k = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t line_size = 0;
	uint32_t off;
	int r;

	f = fopen(path ?: "/proc/kallsyms", "re");
	if (!f)
		return negative_errno();
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	r = names_add(k, PROFILE_KERNEL_MODULE, strlen(PROFILE_KERNEL_MODULE), &off);
	if (r < 0)
		return r;
	while (getline(&line, &line_size, f) >= 0) {
		r = add_line(k, line);
		if (r < 0)
			return r;
	}
	if (ferror(f))
		return -EIO;
	qsort(k->symbols, k->n_symbols, sizeof(KernelSymbol), symbol_compare);
	/* kptr_restrict shows every address as 0: nothing can be named */
	if (k->n_symbols == 0 || k->symbols[k->n_symbols - 1].addr == 0)
		return -ENODATA;
	/* only the running kernel's notes describe /proc/kallsyms */
	if (!path)
		read_build_id("/sys/kernel/notes", k->build_id, sizeof(k->build_id));
	*ret = TAKE_PTR(k);
	return 0;
}

int kernel_symbols_lookup(const KernelSymbols *k, uint64_t addr, const char **ret_name,
			  const char **ret_module, uint64_t *ret_start)
{
	/* the last symbol at or below addr */
	size_t lo = SORTED_UPPER_BOUND(k->symbols, k->n_symbols, addr, addr);
	const KernelSymbol *s;

	if (lo == 0)
		return -ENOENT;
	s = &k->symbols[lo - 1];
	if (s->addr == 0 || (lo == k->n_symbols && addr - s->addr >= KERNEL_SYMBOL_MAX_SIZE))
		return -ENOENT;
	if (ret_name)
		*ret_name = k->names + s->name;
	if (ret_module)
		*ret_module = k->names + s->module;
	if (ret_start)
		*ret_start = s->addr;
	return 0;
}

const char *kernel_symbols_build_id(const KernelSymbols *k)
{
	return k->build_id[0] ? k->build_id : NULL;
}

size_t kernel_symbols_count(const KernelSymbols *k)
{
	return k->n_symbols;
}
