/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The symbol sources on their own, with files written here: kallsyms (core
 * and modules), /tmp/perf-<pid>.map (including a JIT appending to it),
 * C++ demangling, and the cross-session SymbolCache.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "demangle.h"
#include "kernel-symbols.h"
#include "perf-map.h"
#include "symbol-cache.h"
#include "test-util.h"

static void write_file(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "cannot write %s: %m\n", path);
		exit(EXIT_FAILURE);
	}
}

static void test_kallsyms(const char *dir)
{
	char path[512];
	KernelSymbols *k = NULL;
	const char *name = NULL, *module = NULL;
	uint64_t start = 0;
	int r;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	/* unsorted on purpose; data symbols ('d', 'b') are not code */
	write_file(path, "w",
		   "ffffffff81002000 T vfs_write\n"
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81001000 t do_syscall_64\n"
		   "ffffffff81001800 d some_data\n"
		   "ffffffffc0a00000 t ext4_file_write_iter\t[ext4]\n"
		   "ffffffffc0a00400 t ext4_buffered_write_iter\t[ext4]\n");
	r = kernel_symbols_load(path, &k);
	CHECK(r >= 0, "kernel_symbols_load: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(kernel_symbols_count(k) == 5, "%zu code symbols, expected 5",
	      kernel_symbols_count(k));
	CHECK(!kernel_symbols_build_id(k),
	      "a kallsyms file other than the running kernel's has a build-id");
	r = kernel_symbols_lookup(k, 0xffffffff81001900, &name, &module, &start);
	CHECK(r == 0 && strcmp(name, "do_syscall_64") == 0 &&
		      strcmp(module, "[kernel.kallsyms]") == 0 && start == 0xffffffff81001000,
	      "0xffffffff81001900 -> %s %s (r=%d), expected do_syscall_64 past the data symbol",
	      name ?: "-", module ?: "-", r);
	r = kernel_symbols_lookup(k, 0xffffffffc0a00410, &name, &module, NULL);
	CHECK(r == 0 && strcmp(name, "ext4_buffered_write_iter") == 0 &&
		      strcmp(module, "[ext4]") == 0,
	      "module address -> %s %s", name ?: "-", module ?: "-");
	CHECK(kernel_symbols_lookup(k, 0xffffffff80000000, &name, NULL, NULL) == -ENOENT,
	      "address below the kernel resolved");
	CHECK(kernel_symbols_lookup(k, 0xffffffffc0a00400 + (64U << 20), &name, NULL, NULL) ==
		      -ENOENT,
	      "address far past the last symbol resolved");
	kernel_symbols_free(k);

	/* kptr_restrict: every address 0 */
	write_file(path, "w", "0000000000000000 T _stext\n0000000000000000 T vfs_write\n");
	k = NULL;
	CHECK(kernel_symbols_load(path, &k) == -ENODATA && !k, "zeroed kallsyms accepted");

	/* the real one, when readable: every kernel has vfs_write */
	if (kernel_symbols_load(NULL, &k) >= 0) {
		CHECK(kernel_symbols_count(k) > 1000, "only %zu kernel symbols",
		      kernel_symbols_count(k));
		if (access("/sys/kernel/notes", R_OK) == 0)
			CHECK(kernel_symbols_build_id(k) &&
				      strlen(kernel_symbols_build_id(k)) >= 16,
			      "no kernel build-id from /sys/kernel/notes");
		kernel_symbols_free(k);
	}
}

static void test_perf_map(const char *dir)
{
	char path[512];
	PerfMap *m = NULL;
	const char *name = NULL;
	uint64_t start = 0;
	int r;

	snprintf(path, sizeof(path), "%s/perf-1234.map", dir);
	r = perf_map_new(1234, path, &m);
	CHECK(r >= 0, "perf_map_new: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(perf_map_lookup(m, 0x1000, &name, NULL) == -ENOENT, "lookup without a map file");
	write_file(path, "w",
		   "7f0000001000 40 jit_spin_loop\n7f0000002000 100 LazyCompile:*foo bar.js:3\n");
	r = perf_map_lookup(m, 0x7f0000001010, &name, &start);
	CHECK(r == 0 && strcmp(name, "jit_spin_loop") == 0 && start == 0x7f0000001000,
	      "0x7f0000001010 -> %s", r == 0 ? name : strerror(-r));
	r = perf_map_lookup(m, 0x7f00000020ff, &name, NULL);
	CHECK(r == 0 && strcmp(name, "LazyCompile:*foo bar.js:3") == 0,
	      "names with spaces: %s", r == 0 ? name : strerror(-r));
	CHECK(perf_map_lookup(m, 0x7f0000001040, &name, NULL) == -ENOENT, "past the symbol's size");
	/* a JIT appends as it compiles: the new symbol is found without a new PerfMap */
	write_file(path, "a", "7f0000003000 20 jit_later\n");
	r = perf_map_lookup(m, 0x7f0000003004, &name, NULL);
	CHECK(r == 0 && strcmp(name, "jit_later") == 0, "appended symbol: %s",
	      r == 0 ? name : strerror(-r));
	perf_map_free(m);

	/* by default: the target's own /tmp, named as the target knows it */
	r = perf_map_new(getpid(), NULL, &m);
	CHECK(r >= 0, "perf_map_new: %s", strerror(-r));
	if (r >= 0) {
		char want[64];

		snprintf(want, sizeof(want), "/tmp/perf-%d.map", (int)getpid());
		CHECK(strcmp(perf_map_name(m), want) == 0, "default map %s, expected %s",
		      perf_map_name(m), want);
		perf_map_free(m);
	}
}

static void test_demangle(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "_ZN4demo4Grid5relaxEi", "demo::Grid::relax(int)" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		{ "main", NULL },
		{ "_Z", NULL }, /* not a valid mangled name: kept as is */
		{ "i", NULL }, /* would demangle as the type "int" */
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ char *s = symbol_demangle(cases[i].in);

		CHECK(cases[i].out ? s && strcmp(s, cases[i].out) == 0 : !s,
		      "demangle %s -> %s, expected %s", cases[i].in, s ?: "(none)",
		      cases[i].out ?: "(none)");
	}
}

static void test_symbol_cache(void)
{
	_cleanup_(symbol_cache_freep) SymbolCache *c = NULL;
	const SymbolFrame *got = NULL;
	const char *key, *key2, *other;
	SymbolFrame frames[2];
	char name[32], file[32];
	SymbolCacheStats st;
	size_t n = 0;
	int r;

	r = symbol_cache_new(&c);
	CHECK(r >= 0, "symbol_cache_new: %s", strerror(-r));
	if (r < 0)
		return;
	symbol_cache_intern(c, "0123abcd", &key);
	symbol_cache_intern(c, "0123abcd", &key2);
	symbol_cache_intern(c, "/usr/lib/libother.so", &other);
	CHECK(key == key2 && key != other, "interning does not give one pointer per string");
	CHECK(!symbol_cache_lookup(c, key, 0x1234, &got, &n), "empty cache hit");

	/* the cache copies: the caller's buffers may change afterwards */
	snprintf(name, sizeof(name), "inner");
	snprintf(file, sizeof(file), "a.h");
	frames[0] = (SymbolFrame){ .function = name, .file = file, .line = 7, .inlined = true };
	frames[1] = (SymbolFrame){ .function = "outer", .file = NULL, .line = 0 };
	r = symbol_cache_insert(c, key, 0x1234, frames, 2, &got);
	CHECK(r >= 0, "insert: %s", strerror(-r));
	memset(name, 'x', sizeof(name) - 1);
	memset(file, 'y', sizeof(file) - 1);
	CHECK(symbol_cache_lookup(c, key, 0x1234, &got, &n) && n == 2 &&
		      strcmp(got[0].function, "inner") == 0 && strcmp(got[0].file, "a.h") == 0 &&
		      got[0].line == 7 && got[0].inlined && strcmp(got[1].function, "outer") == 0 &&
		      !got[1].file && !got[1].inlined,
	      "cached frames differ from what was stored");
	CHECK(!symbol_cache_lookup(c, other, 0x1234, &got, &n), "other module's key hit");

	/* many locations: the table grows and keeps every entry */
	for (uint64_t a = 0; a < 20000; a++) {
		SymbolFrame f = { .function = "f" };

		r = symbol_cache_insert(c, other, a * 16, &f, 1, &got);
		if (r < 0)
			break;
	}
	CHECK(r >= 0, "bulk insert: %s", strerror(-r));
	CHECK(symbol_cache_lookup(c, other, 19999 * 16, &got, &n) && n == 1 &&
		      symbol_cache_lookup(c, key, 0x1234, &got, &n) && n == 2,
	      "entries lost while growing");
	symbol_cache_get_stats(c, &st);
	CHECK(st.locations == 20001, "%zu locations, expected 20001", st.locations);

	CHECK(!symbol_cache_test_and_mark_module(c, key), "module seen before marking");
	CHECK(symbol_cache_test_and_mark_module(c, key), "module not remembered");
}

int main(void)
{
	char dir[] = "/tmp/profd-symbols-XXXXXX";
	char cmd[64];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	test_kallsyms(dir);
	test_perf_map(dir);
	test_demangle();
	test_symbol_cache();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return test_result();
}
