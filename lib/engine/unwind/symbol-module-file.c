/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "symbol-module-file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "byte-reader.h"
#include "cleanup.h"
#include "hash.h"
#include "id-map.h"

/*
 * Version 2, host byte order (the cache never leaves the machine):
 *   "PROFDSYM" u32 version u32 flags
 *   identity: file and debug {u64 dev, ino, size; i64 mtime_sec; u32 mtime_nsec}, u32 scope,
 *             u16 build-id length, the build-id
 *   u32 locations, each: u64 address, u8 frames, each: string function, string file,
 *             u32 line, u8 inlined
 *   the unwind table (cfi_table_write) when flags has FILE_HAS_CFI
 *   u64 hash_checksum() of everything before it (version 1: FNV-1a, ~13x slower)
 * A string is a u32: NO_STRING, NEW_STRING followed by u16 length and that many bytes
 * ending in NUL, or the index of an earlier new string.
 */
#define MAGIC "PROFDSYM"
#define VERSION 2U
#define NO_STRING UINT32_MAX
#define NEW_STRING (UINT32_MAX - 1)
#define MAX_FRAMES 255

enum {
	FILE_SEEN = 1 << 0,
	FILE_HAS_CFI = 1 << 1,
};

typedef struct Writer {
	FILE *f;
	IdMap *strings; /* strings written so far, by interned pointer (a module's are unique) */
	uint32_t n_locations;
	int error;
} Writer;

static void put(Writer *w, const void *p, size_t n)
{
	if (!w->error && fwrite(p, n, 1, w->f) != 1)
		w->error = -EIO;
}

static void put_string(Writer *w, const char *s)
{
	uint32_t ref = NO_STRING, id;
	uint16_t len;
	bool is_new;

	if (!s) {
		put(w, &ref, sizeof(ref));
		return;
	}
	if (id_map_intern(w->strings, (uintptr_t)s, &id, &is_new) < 0) {
		w->error = -ENOMEM;
		return;
	}
	if (!is_new) {
		put(w, &id, sizeof(id));
		return;
	}
	ref = NEW_STRING;
	len = (uint16_t)(strnlen(s, UINT16_MAX - 1) + 1);
	put(w, &ref, sizeof(ref));
	put(w, &len, sizeof(len));
	put(w, s, len - 1);
	put(w, "", 1);
}

static int write_location(void *userdata, uint64_t address, const SymbolFrame *frames, size_t n)
{
	Writer *w = userdata;
	uint8_t count = (uint8_t)(n > MAX_FRAMES ? MAX_FRAMES : n);

	put(w, &address, sizeof(address));
	put(w, &count, sizeof(count));
	for (size_t i = 0; i < count; i++) {
		uint8_t inlined = frames[i].inlined;

		put_string(w, frames[i].function);
		put_string(w, frames[i].file);
		put(w, &frames[i].line, sizeof(frames[i].line));
		put(w, &inlined, sizeof(inlined));
	}
	w->n_locations++;
	return w->error;
}

static void put_file_identity(Writer *w, const FileIdentity *f)
{
	put(w, &f->dev, sizeof(f->dev));
	put(w, &f->ino, sizeof(f->ino));
	put(w, &f->size, sizeof(f->size));
	put(w, &f->mtime_sec, sizeof(f->mtime_sec));
	put(w, &f->mtime_nsec, sizeof(f->mtime_nsec));
}

static void put_identity(Writer *w, const ModuleIdentity *id)
{
	uint16_t len = (uint16_t)(id->build_id ? strnlen(id->build_id, UINT16_MAX) : 0);

	put_file_identity(w, &id->file);
	put_file_identity(w, &id->debug);
	put(w, &id->scope, sizeof(id->scope));
	put(w, &len, sizeof(len));
	if (len)
		put(w, id->build_id, len);
}

int symbol_module_serialize(SymbolModule *m, char **ret_data, size_t *ret_size)
{
	const CfiTable *cfi = symbol_module_get_cfi(m);
	uint32_t version = VERSION, flags = 0, zero = 0;
	_cleanup_(id_map_freep) IdMap *strings = NULL;
	Writer w = {};
	char *data = NULL, *p;
	size_t size = 0;
	long count_at;
	uint64_t sum;
	int r;

	r = id_map_new(256, &strings);
	if (r < 0)
		return r;
	w.strings = strings;
	w.f = open_memstream(&data, &size);
	if (!w.f)
		return -ENOMEM;
	flags |= symbol_module_was_seen(m) ? FILE_SEEN : 0;
	flags |= cfi ? FILE_HAS_CFI : 0;
	put(&w, MAGIC, 8);
	put(&w, &version, sizeof(version));
	put(&w, &flags, sizeof(flags));
	put_identity(&w, symbol_module_identity(m));
	/* the count, known only after the locations, is filled in at the end */
	count_at = ftell(w.f);
	put(&w, &zero, sizeof(zero));
	r = symbol_module_foreach_location(m, write_location, &w);
	if (r < 0 && !w.error)
		w.error = r;
	if (cfi && !w.error)
		w.error = cfi_table_write(cfi, w.f);
	r = w.error;
	if (fclose(w.f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r >= 0 && (count_at < 0 || (size_t)count_at + sizeof(uint32_t) > size))
		r = -EIO;
	if (r >= 0 && !(p = realloc(data, size + sizeof(sum))))
		r = -ENOMEM;
	if (r < 0) {
		free(data);
		return r;
	}
	data = p;
	memcpy(data + count_at, &w.n_locations, sizeof(uint32_t));
	sum = hash_checksum(data, size);
	memcpy(data + size, &sum, sizeof(sum));
	*ret_data = data;
	*ret_size = size + sizeof(sum);
	return 0;
}

static bool get_file_identity(ByteReader *r, FileIdentity *f)
{
	return BYTE_READER_GET(r, f->dev) && BYTE_READER_GET(r, f->ino) &&
	       BYTE_READER_GET(r, f->size) && BYTE_READER_GET(r, f->mtime_sec) &&
	       BYTE_READER_GET(r, f->mtime_nsec);
}

static bool same_file(const FileIdentity *a, const FileIdentity *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/* Is what 'r' holds the identity of 'id'? */
static bool check_identity(ByteReader *r, const ModuleIdentity *id)
{
	FileIdentity file, debug;
	const char *build_id;
	uint32_t scope;
	uint16_t len;

	if (!get_file_identity(r, &file) || !get_file_identity(r, &debug) ||
	    !BYTE_READER_GET(r, scope) || !BYTE_READER_GET(r, len) ||
	    !(build_id = byte_reader_take(r, len)))
		return false;
	return same_file(&file, &id->file) && same_file(&debug, &id->debug) && scope == id->scope &&
	       (id->build_id ? strlen(id->build_id) == len && memcmp(build_id, id->build_id, len) == 0
			     : len == 0);
}

/* The strings read so far point into the data, each NUL-terminated. */
typedef struct Strings {
	const char **v;
	size_t n, allocated;
} Strings;

static int get_string(ByteReader *r, Strings *s, const char **ret)
{
	uint32_t ref;
	uint16_t len;
	const char *p;

	if (!BYTE_READER_GET(r, ref))
		return -EBADMSG;
	if (ref == NO_STRING) {
		*ret = NULL;
		return 0;
	}
	if (ref != NEW_STRING) {
		if (ref >= s->n)
			return -EBADMSG;
		*ret = s->v[ref];
		return 0;
	}
	if (!BYTE_READER_GET(r, len) || len == 0 || !(p = byte_reader_take(r, len)) ||
	    p[len - 1] != '\0')
		return -EBADMSG;
	if (ARRAY_RESERVE(s->v, s->allocated, s->n + 1, 256) < 0)
		return -ENOMEM;
	s->v[s->n++] = p;
	*ret = p;
	return 0;
}

static int read_locations(SymbolModule *m, ByteReader *r, uint32_t n_locations)
{
	Strings s = {};
	int k = 0;

	for (uint32_t i = 0; i < n_locations && k >= 0; i++) {
		SymbolFrame frames[MAX_FRAMES];
		const SymbolFrame *stored;
		uint64_t address;
		uint8_t count;

		if (!BYTE_READER_GET(r, address) || !BYTE_READER_GET(r, count) || count == 0) {
			k = -EBADMSG;
			break;
		}
		for (uint8_t j = 0; j < count && k >= 0; j++) {
			uint8_t inlined;

			k = get_string(r, &s, &frames[j].function);
			if (k >= 0)
				k = get_string(r, &s, &frames[j].file);
			if (k >= 0 && (!frames[j].function || !BYTE_READER_GET(r, frames[j].line) ||
				       !BYTE_READER_GET(r, inlined) || inlined > 1))
				k = -EBADMSG;
			if (k >= 0)
				frames[j].inlined = inlined;
		}
		if (k >= 0)
			k = symbol_module_insert(m, address, frames, count, &stored);
	}
	free(s.v);
	return k;
}

int symbol_module_deserialize(SymbolModule *m, const void *data, size_t size)
{
	ByteReader r = byte_reader(data, size - (size >= 8 ? 8 : size));
	uint32_t version, flags, n_locations;
	uint64_t sum;
	char magic[8];
	int k;

	if (size < 8)
		return -EBADMSG;
	memcpy(&sum, (const char *)data + size - 8, 8);
	if (sum != hash_checksum(data, size - 8))
		return -EBADMSG;
	if (!BYTE_READER_GET(&r, magic) || memcmp(magic, MAGIC, 8) != 0 ||
	    !BYTE_READER_GET(&r, version) || version != VERSION || !BYTE_READER_GET(&r, flags) ||
	    !check_identity(&r, symbol_module_identity(m)) || !BYTE_READER_GET(&r, n_locations))
		return -EBADMSG;
	k = read_locations(m, &r, n_locations);
	if (k < 0)
		return k;
	if (flags & FILE_HAS_CFI) {
		CfiTable *t;

		k = cfi_table_read(&r, &t);
		if (k < 0)
			return k;
		symbol_module_set_cfi(m, t);
	}
	if (byte_reader_left(&r) != 0)
		return -EBADMSG;
	if (flags & FILE_SEEN)
		symbol_module_test_and_mark_seen(m);
	return 0;
}
