/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SymbolCache on its own: modules keyed by file identity, build-id and
 * scope (DESIGN.md §8 "Caches"), copies of what is stored, pins, and
 * eviction of whole unpinned modules, least recently used first, under the
 * byte cap.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "address-space.h"
#include "cleanup.h"
#include "memory-store.h"
#include "symbol-cache.h"
#include "symbol-module-file.h"
#include "symbolize.h"
#include "test-util.h"

static ModuleIdentity identity(uint64_t ino, uint32_t scope, const char *build_id)
{
	return (ModuleIdentity){
		.file = { .dev = 2049, .ino = ino, .size = 4096, .mtime_sec = 1700000000 },
		.scope = scope,
		.build_id = build_id,
	};
}

static SymbolModule *acquire(SymbolCache *c, ModuleIdentity id)
{
	SymbolModule *m = NULL;
	int r = symbol_cache_acquire(c, &id, &m);

	CHECK(r >= 0 && m, "symbol_cache_acquire: %s", strerror(-r));
	if (!m)
		exit(test_result());
	return m;
}

static void insert_one(SymbolModule *m, uint64_t address, const char *function)
{
	SymbolFrame f = { .function = function };
	const SymbolFrame *got;
	int r = symbol_module_insert(m, address, &f, 1, &got);

	CHECK(r >= 0, "insert: %s", strerror(-r));
}

static bool has(SymbolModule *m, uint64_t address, const char *function)
{
	const SymbolFrame *got;
	size_t n;

	return symbol_module_lookup(m, address, &got, &n) && n == 1 &&
	       strcmp(got[0].function, function) == 0;
}

static void test_identity_rule(void)
{
	struct stat st = { .st_mode = S_IFREG | 0644, .st_uid = 0 }, debug;
	ModuleIdentity id;

	module_identity_init(&id, &st, NULL, 1000, NULL);
	CHECK(id.scope == SYMBOL_SCOPE_SHARED, "a root-owned 0644 file is not shared");
	st.st_mode = S_IFREG | 0664;
	module_identity_init(&id, &st, NULL, 1000, NULL);
	CHECK(id.scope == 1000, "a group-writable file is shared");
	st.st_mode = S_IFREG | 0646;
	module_identity_init(&id, &st, NULL, 1000, NULL);
	CHECK(id.scope == 1000, "a world-writable file is shared");
	st.st_mode = S_IFREG | 0755;
	st.st_uid = 1000;
	module_identity_init(&id, &st, NULL, 0, NULL);
	CHECK(id.scope == 0, "a user's file read for root is shared");
	st.st_uid = 0;
	st.st_mode = S_IFCHR | 0644;
	module_identity_init(&id, &st, NULL, 1000, NULL);
	CHECK(id.scope == 1000, "a device is shared");
	st.st_mode = S_IFREG | 0644;
	debug = st;
	debug.st_uid = 1000;
	module_identity_init(&id, &st, &debug, 1000, NULL);
	CHECK(id.scope == 1000, "a system file named from a user's debug file is shared");
}

static void test_keys(void)
{
	_cleanup_(symbol_cache_freep) SymbolCache *c = NULL;
	SymbolModule *a, *a2, *forged, *other_uid, *no_build_id, *touched, *with_debug;
	ModuleIdentity id;
	int r;

	r = symbol_cache_new(&c);
	CHECK(r >= 0, "symbol_cache_new: %s", strerror(-r));
	if (r < 0)
		return;
	a = acquire(c, identity(10, SYMBOL_SCOPE_SHARED, "0123abcd"));
	a2 = acquire(c, identity(10, SYMBOL_SCOPE_SHARED, "0123abcd"));
	CHECK(a == a2, "the same identity gives two modules");
	insert_one(a, 0x1234, "__libc_start_call_main");

	/* the attack of #17 item 7: another file claiming the same build-id */
	forged = acquire(c, identity(11, 65534, "0123abcd"));
	CHECK(forged != a, "a file with a forged build-id shares the real file's module");
	insert_one(forged, 0x1234, "planted");
	CHECK(has(a, 0x1234, "__libc_start_call_main"), "the forged file's name replaced the real one");

	/* the same file read for another uid is another module unless shared */
	other_uid = acquire(c, identity(11, 1000, "0123abcd"));
	CHECK(other_uid != forged && !has(other_uid, 0x1234, "planted"),
	      "a user's module reached another uid");
	no_build_id = acquire(c, identity(10, SYMBOL_SCOPE_SHARED, NULL));
	CHECK(no_build_id != a, "a build-id is ignored");
	id = identity(10, SYMBOL_SCOPE_SHARED, "0123abcd");
	id.file.mtime_nsec = 1;
	touched = acquire(c, id);
	CHECK(touched != a, "a changed mtime finds the old module");
	id = identity(10, SYMBOL_SCOPE_SHARED, "0123abcd");
	id.debug.ino = 99;
	with_debug = acquire(c, id);
	CHECK(with_debug != a && !has(with_debug, 0x1234, "__libc_start_call_main"),
	      "names found without debug info serve the module with it");

	CHECK(!symbol_module_test_and_mark_seen(a), "module seen before marking");
	CHECK(symbol_module_test_and_mark_seen(a2), "module not remembered");
	CHECK(!symbol_module_test_and_mark_seen(forged), "marking one module marked another");
	symbol_module_unpin(a);
	symbol_module_unpin(a2);
	symbol_module_unpin(forged);
	symbol_module_unpin(other_uid);
	symbol_module_unpin(no_build_id);
	symbol_module_unpin(touched);
	symbol_module_unpin(with_debug);
}

static void test_copies_and_growth(void)
{
	_cleanup_(symbol_cache_freep) SymbolCache *c = NULL;
	const SymbolFrame *got = NULL;
	SymbolFrame frames[2];
	char name[32], file[32];
	SymbolCacheStats st;
	SymbolModule *m;
	size_t n = 0;
	int r;

	r = symbol_cache_new(&c);
	CHECK(r >= 0, "symbol_cache_new: %s", strerror(-r));
	if (r < 0)
		return;
	m = acquire(c, identity(1, SYMBOL_SCOPE_SHARED, "aa"));
	CHECK(!symbol_module_lookup(m, 0x1234, &got, &n), "empty module hit");
	/* the cache copies: the caller's buffers may change afterwards */
	snprintf(name, sizeof(name), "inner");
	snprintf(file, sizeof(file), "a.h");
	frames[0] = (SymbolFrame){ .function = name, .file = file, .line = 7, .inlined = true };
	frames[1] = (SymbolFrame){ .function = "outer", .file = NULL, .line = 0 };
	r = symbol_module_insert(m, 0x1234, frames, 2, &got);
	CHECK(r >= 0, "insert: %s", strerror(-r));
	memset(name, 'x', sizeof(name) - 1);
	memset(file, 'y', sizeof(file) - 1);
	CHECK(symbol_module_lookup(m, 0x1234, &got, &n) && n == 2 &&
		      strcmp(got[0].function, "inner") == 0 && strcmp(got[0].file, "a.h") == 0 &&
		      got[0].line == 7 && got[0].inlined && strcmp(got[1].function, "outer") == 0 &&
		      !got[1].file && !got[1].inlined,
	      "cached frames differ from what was stored");

	/* many locations: the table grows and keeps every entry */
	for (uint64_t a = 0; a < 20000; a++)
		insert_one(m, a * 16 + 1, a % 2 ? "odd" : "even");
	CHECK(has(m, 19999 * 16 + 1, "odd") && has(m, 1, "even"), "entries lost while growing");
	symbol_cache_get_stats(c, &st);
	CHECK(st.locations == 20001, "%zu locations, expected 20001", st.locations);
	CHECK(st.modules == 1 && st.pinned_modules == 1, "%zu modules, %zu pinned", st.modules,
	      st.pinned_modules);
	symbol_module_unpin(m);
}

/* Fill a module with about 'bytes' of names. */
static void fill(SymbolModule *m, size_t bytes)
{
	char name[64];

	for (size_t i = 0; i < bytes / 64; i++) {
		snprintf(name, sizeof(name), "function_%zu_with_a_long_enough_name", i);
		insert_one(m, i, name);
	}
}

static void test_eviction(void)
{
	_cleanup_(symbol_cache_freep) SymbolCache *c = NULL;
	SymbolModule *a, *b, *d, *pinned;
	SymbolCacheStats st;
	size_t module_bytes;
	int r;

	r = symbol_cache_new(&c);
	CHECK(r >= 0, "symbol_cache_new: %s", strerror(-r));
	if (r < 0)
		return;
	symbol_cache_set_max_bytes(c, 1 << 20);

	/* a pinned module is never evicted, even alone over the cap */
	pinned = acquire(c, identity(100, SYMBOL_SCOPE_SHARED, "pinned"));
	fill(pinned, 2 << 20);
	symbol_cache_get_stats(c, &st);
	CHECK(st.bytes > (1 << 20) && st.evicted_modules == 0, "%zu bytes, %zu evicted", st.bytes,
	      st.evicted_modules);

	/* unpinned: a, then b; a used again, so b is the least recently used */
	a = acquire(c, identity(1, SYMBOL_SCOPE_SHARED, "a"));
	insert_one(a, 1, "in_a");
	symbol_module_unpin(a);
	b = acquire(c, identity(2, SYMBOL_SCOPE_SHARED, "b"));
	insert_one(b, 1, "in_b");
	symbol_module_unpin(b);
	symbol_cache_get_stats(c, &st);
	/* over the cap (the pinned module alone is) but nothing to evict except a and b... */
	CHECK(st.modules == 1 && st.evicted_modules == 2,
	      "unpinned modules kept over the cap: %zu modules, %zu evicted", st.modules,
	      st.evicted_modules);
	symbol_module_unpin(pinned);
	symbol_cache_get_stats(c, &st);
	CHECK(st.modules == 0, "%zu modules after unpinning", st.modules);

	/* within the cap: LRU order decides (the cap fits two modules of this size, not three) */
	a = acquire(c, identity(1, SYMBOL_SCOPE_SHARED, "a"));
	CHECK(!has(a, 1, "in_a") && !symbol_module_test_and_mark_seen(a),
	      "an evicted module came back with its contents");
	fill(a, 64 << 10);
	symbol_cache_get_stats(c, &st);
	module_bytes = st.bytes;
	symbol_cache_set_max_bytes(c, module_bytes * 5 / 2);
	symbol_module_unpin(a);
	b = acquire(c, identity(2, SYMBOL_SCOPE_SHARED, "b"));
	fill(b, 64 << 10);
	symbol_module_unpin(b);
	a = acquire(c, identity(1, SYMBOL_SCOPE_SHARED, "a"));
	symbol_module_unpin(a);
	d = acquire(c, identity(3, SYMBOL_SCOPE_SHARED, "d"));
	fill(d, 64 << 10);
	symbol_module_unpin(d);
	symbol_cache_get_stats(c, &st);
	CHECK(st.modules == 2 && st.bytes <= module_bytes * 5 / 2,
	      "%zu modules, %zu bytes over a cap of %zu", st.modules, st.bytes,
	      module_bytes * 5 / 2);
	a = acquire(c, identity(1, SYMBOL_SCOPE_SHARED, "a"));
	b = acquire(c, identity(2, SYMBOL_SCOPE_SHARED, "b"));
	d = acquire(c, identity(3, SYMBOL_SCOPE_SHARED, "d"));
	CHECK(has(a, 0, "function_0_with_a_long_enough_name") &&
		      has(d, 0, "function_0_with_a_long_enough_name"),
	      "a recently used module was evicted");
	CHECK(!has(b, 0, "function_0_with_a_long_enough_name"),
	      "the least recently used module was kept");
	symbol_module_unpin(a);
	symbol_module_unpin(b);
	symbol_module_unpin(d);
}

/* This test's own code compiled into a table, for a module to carry. */
static CfiTable *own_cfi_table(void)
{
	_cleanup_(symbol_cache_freep) SymbolCache *c = NULL;
	ProcessMaps *maps = NULL;
	AddressSpace *space = NULL;
	CfiTable *t = NULL;
	ModuleInfo *info;
	Dwfl_Module *mod;

	if (symbol_cache_new(&c) < 0 || process_maps_load((uint32_t)getpid(), &maps) < 0 ||
	    address_space_new(NULL, c, 0, &space) < 0 || address_space_update(space, maps) < 0)
		goto out;
	mod = address_space_find(space, (uint64_t)(uintptr_t)own_cfi_table, &info);
	if (mod && cfi_table_build(mod, &t) < 0)
		t = NULL;
out:
	address_space_free(space);
	process_maps_free(maps);
	return t;
}

/* A new cache (a new process, as far as the store knows) over 'store'. */
static SymbolCache *cache_with_store(const SymbolCacheStore *store)
{
	SymbolCache *c;
	int r = symbol_cache_new(&c);

	CHECK(r >= 0, "symbol_cache_new: %s", strerror(-r));
	if (r < 0)
		return NULL;
	symbol_cache_set_store(c, store);
	return c;
}

static void test_store(void)
{
	MemoryStore ms = {};
	SymbolCacheStore store = { memory_load, memory_save, &ms };
	ModuleIdentity id = identity(7, 1000, "feedface");
	_cleanup_(cfi_table_freep) CfiTable *reference = own_cfi_table();
	const CfiTable *kept;
	SymbolFrame frames[2] = {
		{ .function = "inner", .file = "a.h", .line = 3, .inlined = true },
		{ .function = "outer", .file = "a.c", .line = 30 },
	};
	const SymbolFrame *got;
	SymbolCacheStats st;
	SymbolModule *m;
	SymbolCache *c;
	size_t n;
	int r;

	CHECK(reference && cfi_table_rows(reference) > 10, "no CFI table of this test's code");
	if (!reference)
		return;

	/* a module learns names and its table; unpinned, it is saved */
	c = cache_with_store(&store);
	if (!c)
		return;
	m = acquire(c, id);
	CHECK(ms.loads == 1 && !symbol_module_was_seen(m), "a new module was not looked up");
	r = symbol_module_insert(m, 0x40, frames, 2, &got);
	CHECK(r >= 0, "insert: %s", strerror(-r));
	insert_one(m, 0x80, "outer");
	{
		CfiTable *copy;
		ByteReader br;
		char *bytes = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&bytes, &size);

		CHECK(f && cfi_table_write(reference, f) >= 0 && fclose(f) == 0, "cfi_table_write");
		br = byte_reader(bytes, size);
		r = cfi_table_read(&br, &copy);
		CHECK(r >= 0 && byte_reader_left(&br) == 0, "cfi_table_read: %s", strerror(-r));
		free(bytes);
		if (r >= 0)
			symbol_module_set_cfi(m, copy);
	}
	symbol_module_test_and_mark_seen(m);
	symbol_module_unpin(m);
	CHECK(ms.saves == 1 && ms.size > 0, "the module was not saved on its last unpin");
	m = acquire(c, id);
	symbol_module_unpin(m);
	CHECK(ms.saves == 1, "a module that learned nothing was saved again");
	symbol_cache_free(c);

	/* a new process: the module comes back from the store, names, table and all */
	c = cache_with_store(&store);
	if (!c)
		return;
	m = acquire(c, id);
	CHECK(symbol_module_was_seen(m), "the loaded module was not seen");
	CHECK(symbol_module_lookup(m, 0x40, &got, &n) && n == 2 &&
		      strcmp(got[0].function, "inner") == 0 && strcmp(got[0].file, "a.h") == 0 &&
		      got[0].line == 3 && got[0].inlined && strcmp(got[1].function, "outer") == 0 &&
		      strcmp(got[1].file, "a.c") == 0 && got[1].line == 30 && !got[1].inlined,
	      "the loaded frames differ");
	CHECK(has(m, 0x80, "outer"), "a loaded location is missing");
	kept = symbol_module_get_cfi(m);
	CHECK(kept && cfi_table_rows(kept) == cfi_table_rows(reference), "the table did not load");
	for (uint64_t a = (uint64_t)(uintptr_t)own_cfi_table & ~0xfffULL, i = 0; kept && i < 65536;
	     i++)
		if (memcmp(cfi_table_lookup(kept, a + i), cfi_table_lookup(reference, a + i),
			   sizeof(CfiRule)) != 0) {
			CHECK(false, "the loaded table differs at %#llx", (unsigned long long)(a + i));
			break;
		}
	symbol_module_unpin(m);
	symbol_cache_get_stats(c, &st);
	CHECK(st.loaded_modules == 1 && st.saved_modules == 0, "%zu loaded, %zu saved",
	      st.loaded_modules, st.saved_modules);
	symbol_cache_free(c);

	/* damaged or foreign files are refused, and nothing of them is used: any one byte changed */
	r = symbol_cache_new(&c);
	if (r < 0)
		return;
	for (size_t i = 0; i < ms.size; i++) {
		SymbolModule *fresh;

		((uint8_t *)ms.data)[i] ^= 0x40;
		r = symbol_module_deserialize((fresh = acquire(c, identity(8 + i, 1000, "feedface"))),
					      ms.data, ms.size);
		CHECK(r == -EBADMSG, "a file with byte %zu changed was read: %d", i, r);
		symbol_module_unpin(fresh);
		((uint8_t *)ms.data)[i] ^= 0x40;
	}
	m = acquire(c, identity(8, 1000, "feedface"));
	CHECK(symbol_module_deserialize(m, ms.data, ms.size) == -EBADMSG,
	      "another module's file was read");
	CHECK(symbol_module_deserialize(m, ms.data, ms.size - 1) == -EBADMSG,
	      "a file cut short was read");
	CHECK(!has(m, 0x80, "outer"), "a refused file left names behind");
	symbol_module_unpin(m);
	symbol_cache_free(c);
	free(ms.data);
}

/* Opens as the default opener does, counting the requests for debug files. */
static int counting_open(const TargetFileRequest *request, void *userdata)
{
	unsigned *debug_requests = userdata;

	if (request->kind == TARGET_FILE_BUILD_ID || request->kind == TARGET_FILE_DEBUGLINK ||
	    request->kind == TARGET_FILE_DEBUG_ALT)
		(*debug_requests)++;
	return target_file_opener_open(&target_file_opener_default, request);
}

/* A session over 'c': this process's address space; 'addr' named as "function file:line". */
static char *name_in_session(SymbolCache *c, unsigned *debug_requests, uint64_t addr)
{
	TargetFileOpener files = { counting_open, debug_requests };
	const SymbolFrame *frames;
	ProcessMaps *maps = NULL;
	AddressSpace *space = NULL;
	ModuleInfo *info;
	Dwfl_Module *mod;
	char *name = NULL;
	size_t n;

	if (process_maps_load((uint32_t)getpid(), &maps) >= 0 &&
	    address_space_new(&files, c, 0, &space) >= 0 && address_space_update(space, maps) >= 0 &&
	    (mod = address_space_find(space, addr, &info)) &&
	    symbolize_address(mod, info, addr, &frames, &n) >= 0 &&
	    asprintf(&name, "%s %s:%u", frames[0].function, frames[0].file ?: "?",
		     frames[0].line) < 0)
		name = NULL;
	address_space_free(space);
	process_maps_free(maps);
	CHECK(name, "address %#llx not named", (unsigned long long)addr);
	return name;
}

/*
 * A module's debug info is opened once for the cache, not once per session: a
 * second session naming another address of libc asks for no debug file, and
 * names it as a cache of its own does.
 */
static void test_naming_once(void)
{
	_cleanup_(symbol_cache_freep) SymbolCache *c = NULL, *fresh = NULL;
	/* libc's own (under AddressSanitizer, RTLD_DEFAULT would find its interceptor) */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uint64_t a = libc ? (uint64_t)(uintptr_t)dlsym(libc, "qsort_r") : 0;
	unsigned first = 0, second = 0, alone = 0;
	_cleanup_free_ char *name_a = NULL, *name_b = NULL, *name_b_alone = NULL;

	if (libc)
		dlclose(libc);
	CHECK(a != 0, "no qsort_r in this process's libc");
	if (a == 0 || symbol_cache_new(&c) < 0 || symbol_cache_new(&fresh) < 0)
		return;
	name_a = name_in_session(c, &first, a);
	name_b = name_in_session(c, &second, a + 16);
	name_b_alone = name_in_session(fresh, &alone, a + 16);
	CHECK(first > 0, "the first session asked for no debug file of libc");
	CHECK(second == 0, "the second session asked for %u debug files again", second);
	CHECK(name_b && name_b_alone && strcmp(name_b, name_b_alone) == 0,
	      "named '%s' in the second session, '%s' by a cache of its own", name_b ?: "",
	      name_b_alone ?: "");
}

int main(void)
{
	test_identity_rule();
	test_keys();
	test_copies_and_growth();
	test_eviction();
	test_store();
	test_naming_once();
	return test_result();
}
