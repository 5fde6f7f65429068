/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "debug-file.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>

#include "cleanup.h"

/* The standard CRC-32 of a whole file, as .gnu_debuglink records it. */
static bool file_crc32(int fd, uint32_t *ret)
{
	struct stat st;
	uLong crc = crc32(0, NULL, 0);
	const unsigned char *p;

	if (fstat(fd, &st) < 0 || st.st_size <= 0)
		return false;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return false;
	for (off_t off = 0; off < st.st_size;) {
		uInt n = (uInt)(st.st_size - off < (1 << 30) ? st.st_size - off : (1 << 30));

		crc = crc32(crc, p + off, n);
		off += n;
	}
	munmap((void *)p, (size_t)st.st_size);
	*ret = (uint32_t)crc;
	return true;
}

/* Is 'fd' the debug file wanted: the same build-id, or without one the debuglink's CRC? */
static bool is_match(int fd, const void *build_id, int build_id_size, bool check_crc,
		     uint32_t crc)
{
	const void *id = NULL;
	ssize_t n = -1;
	uint32_t actual;
	bool same;
	Elf *elf;

	if (build_id_size > 0) {
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf)
			n = dwelf_elf_gnu_build_id(elf, &id);
		same = n == build_id_size && memcmp(id, build_id, (size_t)n) == 0;
		elf_end(elf);
		return same;
	}
	return check_crc && file_crc32(fd, &actual) && actual == crc;
}

/* Ask for one candidate; keep it if it matches. */
static int request(DebugFileSource *src, const TargetFileRequest *req, const void *build_id,
		   int build_id_size, bool check_crc, uint32_t crc)
{
	int fd = target_file_opener_open(src->files, req);

	if (fd < 0) {
		if (src->last_error != -EAGAIN)
			src->last_error = fd;
		return -1;
	}
	if (!is_match(fd, build_id, build_id_size, check_crc, crc)) {
		safe_close(fd);
		return -1;
	}
	return fd;
}

static int by_build_id(DebugFileSource *src, const void *build_id, int size)
{
	TargetFileRequest req = { .kind = TARGET_FILE_BUILD_ID, .pid = src->pid };

	if (size < 2 || size > TARGET_FILE_BUILD_ID_MAX)
		return -1;
	req.build_id_size = (uint32_t)size;
	memcpy(req.build_id, build_id, (size_t)size);
	return request(src, &req, build_id, size, false, 0);
}

static int by_name(DebugFileSource *src, TargetFileKind kind, const char *name,
		   const void *build_id, int build_id_size, bool check_crc, uint32_t crc)
{
	TargetFileRequest req = {
		.kind = kind,
		.pid = src->pid,
		.address = src->mapped_at,
		.inode = src->inode,
		.dev_major = src->dev_major,
		.dev_minor = src->dev_minor,
	};
	size_t len = strlen(name);

	if (len == 0 || len >= sizeof(req.name))
		return -1;
	memcpy(req.name, name, len + 1);
	return request(src, &req, build_id, build_id_size, check_crc, crc);
}

/*
 * libdwfl calls find_debuginfo for the module's debug file, and again for the
 * dwz file of whichever file holds its DWARF (then with the altlink's name and
 * no CRC). Tell them apart by the module's own .gnu_debuglink.
 */
static bool is_altlink_call(Dwfl_Module *mod, const char *debuglink_file, GElf_Word crc)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Word own_crc = 0;
	const char *own = elf ? dwelf_elf_gnu_debuglink(elf, &own_crc) : NULL;

	if (!debuglink_file)
		return false;
	return !own || strcmp(own, debuglink_file) != 0 || own_crc != crc;
}

static int find_alt(DebugFileSource *src, Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias); /* set up already: no recursion */
	const char *altname;
	const void *id;
	ssize_t n = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &altname, &id) : -1;
	int fd;

	if (n <= 0)
		return -1;
	fd = by_build_id(src, id, (int)n);
	if (fd < 0 && altname[0] == '/')
		fd = by_name(src, TARGET_FILE_DEBUG_ALT, altname, id, (int)n, false, 0);
	return fd;
}

/* The module's own debug file: by build-id, else by its .gnu_debuglink. */
static int find_own(DebugFileSource *src, Dwfl_Module *mod, const char *debuglink_file,
		    GElf_Word debuglink_crc)
{
	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int n, fd;

	src->last_error = -ENOENT;
	n = dwfl_module_build_id(mod, &id, &vaddr);
	fd = n > 0 ? by_build_id(src, id, n) : -1;
	if (fd < 0 && debuglink_file)
		fd = by_name(src, TARGET_FILE_DEBUGLINK, debuglink_file, id, n > 0 ? n : 0, true,
			     debuglink_crc);
	return fd;
}

int debug_file_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		    char **debuginfo_file_name)
{
	DebugFileSource *src = *userdata;

	if (!src)
		return -1;
	if (is_altlink_call(mod, debuglink_file, debuglink_crc))
		return find_alt(src, mod);
	return find_own(src, mod, debuglink_file, debuglink_crc);
}

int debug_file_stat(DebugFileSource *src, Dwfl_Module *mod, struct stat *ret)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Word crc = 0;
	const char *debuglink = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
	struct stat st;
	int fd, r = 0;

	fd = find_own(src, mod, debuglink, crc);
	if (fd < 0)
		return src->last_error < 0 ? src->last_error : -ENOENT;
	if (fstat(fd, &st) < 0)
		r = -errno;
	safe_close(fd);
	if (r < 0)
		return r;
	*ret = st;
	return 0;
}
