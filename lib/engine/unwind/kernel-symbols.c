/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernel-symbols.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "hex.h"
#include "io-util.h"
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
	void *map;            /* a sealed table mapped: symbols and names point into it */
	size_t map_size;
};

/* Symbols this far past the last one are not kernel text any more. */
#define KERNEL_SYMBOL_MAX_SIZE (1U << 20)

/*
 * The table format (kernel_symbols_write_table()): this header, the symbols
 * (KernelSymbol, sorted) and the names, in host byte order — a copy made by
 * this program for itself, never a file from elsewhere.
 */
#define TABLE_MAGIC "profd-kallsyms-1"
typedef struct TableHeader {
	char magic[16];
	uint64_t n_symbols;
	uint64_t names_size;
	char build_id[48];
} TableHeader;

static int names_add(KernelSymbols *k, const char *s, size_t len, uint32_t *ret)
{
	int r;

	/* offsets into the names are 32-bit */
	if (k->names_size + len + 1 > UINT32_MAX)
		return -E2BIG;
	r = ARRAY_RESERVE(k->names, k->names_allocated, k->names_size + len + 1, 1 << 20);
	if (r < 0)
		return r;
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
	r = ARRAY_RESERVE(k->symbols, k->allocated, k->n_symbols + 1, 65536);
	if (r < 0)
		return r;
	k->symbols[k->n_symbols++] = (KernelSymbol){ addr, name_off, module_off };
	return 0;
}

static int symbol_compare(const void *a, const void *b)
{
	const KernelSymbol *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The GNU build-id note among the kernel's ELF notes (/sys/kernel/notes), as hex. */
static void read_build_id(int fd, char *ret, size_t size)
{
	unsigned char buf[4096];
	ssize_t n;
	size_t off = 0;

	ret[0] = '\0';
	if (fd < 0 || (n = pread(fd, buf, sizeof(buf), 0)) < 0)
		return;
	while (off + sizeof(Elf64_Nhdr) <= (size_t)n) {
		Elf64_Nhdr h;
		size_t name_off = off + sizeof(h), desc_off;

		memcpy(&h, buf + off, sizeof(h));
		desc_off = name_off + ((h.n_namesz + 3) & ~3U);
		if (desc_off + h.n_descsz > (size_t)n)
			return;
		if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 &&
		    memcmp(buf + name_off, "GNU", 4) == 0 && HEX_ENCODED_SIZE(h.n_descsz) <= size) {
			hex_encode(buf + desc_off, h.n_descsz, ret);
			return;
		}
		off = desc_off + ((h.n_descsz + 3) & ~3U);
	}
}

KernelSymbols *kernel_symbols_free(KernelSymbols *k)
{
	if (!k)
		return NULL;
	if (k->map)
		munmap(k->map, k->map_size);
	else {
		free(k->symbols);
		free(k->names);
	}
	free(k);
	return NULL;
}

/* pread exactly 'size' bytes at 'offset'; -EBADMSG when the file ends first. */
static int pread_all(int fd, void *buf, size_t size, uint64_t offset)
{
	while (size > 0) {
		ssize_t n = pread(fd, buf, size, (off_t)offset);

		if (n < 0)
			return negative_errno();
		if (n == 0)
			return -EBADMSG;
		buf = (char *)buf + n;
		size -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

/*
 * Checks what kernel_symbols_lookup() relies on: NUL-terminated names and, with
 * 'symbols', every symbol's offsets inside them and sorted addresses. A sealed
 * table (profd's own, mapped by every new unwinder) is not walked: that would
 * fault in all of it (~0.5 ms of each unwinder's start); each lookup checks the
 * offsets of the symbol it returns instead, and an unsorted table only names badly.
 */
static int table_check(const KernelSymbols *k, bool symbols)
{
	if (k->names_size == 0 || k->names[k->names_size - 1] != '\0' ||
	    memchr(k->build_id, '\0', sizeof(k->build_id)) == NULL)
		return -EBADMSG;
	for (size_t i = 0; symbols && i < k->n_symbols; i++)
		if (k->symbols[i].name >= k->names_size || k->symbols[i].module >= k->names_size ||
		    (i > 0 && k->symbols[i].addr < k->symbols[i - 1].addr))
			return -EBADMSG;
	return 0;
}

#define TABLE_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
_Static_assert(sizeof(TableHeader) % _Alignof(KernelSymbol) == 0, "mapped symbols are aligned");

static int load_table(int fd, const TableHeader *h, KernelSymbols *k)
{
	struct stat st;
	int seals, r;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	/* sizes that agree with the file before anything is allocated for them */
	if (h->n_symbols == 0 || h->n_symbols > UINT32_MAX || h->names_size == 0 ||
	    h->names_size > UINT32_MAX || st.st_size < 0 ||
	    (uint64_t)st.st_size != sizeof(*h) + h->n_symbols * sizeof(KernelSymbol) + h->names_size)
		return -EBADMSG;
	k->n_symbols = k->allocated = h->n_symbols;
	k->names_size = k->names_allocated = h->names_size;
	memcpy(k->build_id, h->build_id, sizeof(k->build_id));
	/*
	 * A table nobody can change any more (the KernelTable's memfd every unwinder gets) is
	 * mapped: no copy into fresh heap pages, a few ms of each unwinder's start
	 */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals >= 0 && (seals & TABLE_SEALS) == TABLE_SEALS) {
		k->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (k->map == MAP_FAILED) {
			k->map = NULL;
			return negative_errno();
		}
		k->map_size = (size_t)st.st_size;
		k->symbols = (KernelSymbol *)((char *)k->map + sizeof(*h));
		k->names = (char *)(k->symbols + k->n_symbols);
		return table_check(k, false);
	}
	k->symbols = calloc(k->n_symbols, sizeof(KernelSymbol));
	k->names = malloc(k->names_size);
	if (!k->symbols || !k->names)
		return -ENOMEM;
	r = pread_all(fd, k->symbols, k->n_symbols * sizeof(KernelSymbol), sizeof(*h));
	if (r >= 0)
		r = pread_all(fd, k->names, k->names_size,
			      sizeof(*h) + k->n_symbols * sizeof(KernelSymbol));
	if (r < 0)
		return r;
	return table_check(k, true);
}

static int load_text(int kallsyms_fd, int notes_fd, KernelSymbols *k)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t line_size = 0;
	uint32_t off;
	int r;

	r = fdopen_dup(kallsyms_fd, "re", &f);
	if (r < 0)
		return r;
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
	read_build_id(notes_fd, k->build_id, sizeof(k->build_id));
	return 0;
}

int kernel_symbols_load(int kallsyms_fd, int notes_fd, KernelSymbols **ret)
{
	_cleanup_(kernel_symbols_freep) KernelSymbols *k = calloc(1, sizeof(KernelSymbols));
	TableHeader h;
	ssize_t n;
	int r;

	if (!k)
		return -ENOMEM;
	n = pread(kallsyms_fd, &h, sizeof(h), 0);
	if (n == (ssize_t)sizeof(h) && memcmp(h.magic, TABLE_MAGIC, sizeof(h.magic)) == 0)
		r = load_table(kallsyms_fd, &h, k);
	else
		r = load_text(kallsyms_fd, notes_fd, k);
	if (r < 0)
		return r;
	/* kptr_restrict shows every address as 0: nothing can be named */
	if (k->n_symbols == 0 || k->symbols[k->n_symbols - 1].addr == 0)
		return -ENODATA;
	*ret = TAKE_PTR(k);
	return 0;
}

int kernel_symbols_write_table(const KernelSymbols *k, int fd)
{
	TableHeader h = { .n_symbols = k->n_symbols, .names_size = k->names_size };
	_cleanup_fclose_ FILE *f = NULL;
	int r;

	memcpy(h.magic, TABLE_MAGIC, sizeof(h.magic));
	memcpy(h.build_id, k->build_id, sizeof(k->build_id));
	r = fdopen_dup(fd, "we", &f);
	if (r < 0)
		return r;
	if (fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(k->symbols, sizeof(KernelSymbol), k->n_symbols, f) != k->n_symbols ||
	    fwrite(k->names, 1, k->names_size, f) != k->names_size || fflush(f) != 0)
		return errno > 0 ? -errno : -EIO;
	return 0;
}

int kernel_symbols_load_running(const TargetFileOpener *files, KernelSymbols **ret)
{
	TargetFileRequest req = { .kind = TARGET_FILE_KALLSYMS };
	_cleanup_close_ int kallsyms = -1, notes = -1;

	kallsyms = target_file_opener_open(files, &req);
	if (kallsyms < 0)
		return kallsyms;
	req.kind = TARGET_FILE_KERNEL_NOTES;
	/* without the notes, symbols still name frames: only the build-id is missing */
	notes = target_file_opener_open(files, &req);
	return kernel_symbols_load(kallsyms, notes, ret);
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
	if (s->name >= k->names_size || s->module >= k->names_size)
		return -EBADMSG; /* a sealed table's: not checked at load */
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
