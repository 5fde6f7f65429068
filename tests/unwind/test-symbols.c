/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The symbol sources on their own, with files written here: kallsyms (core
 * and modules) and its table form (KernelTable), /tmp/perf-<pid>.map
 * (including a JIT appending to it), and C++ demangling (the SymbolCache
 * has test-symbol-cache.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "demangle.h"
#include "kernel-symbols.h"
#include "kernel-table.h"
#include "memory-store.h"
#include "perf-map.h"
#include "test-util.h"

static void write_file(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "cannot write %s: %m\n", path);
		exit(EXIT_FAILURE);
	}
}

/* A kallsyms-format file that is not the running kernel's: no notes, no build-id. */
static int load_kallsyms_file(const char *path, KernelSymbols **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : kernel_symbols_load(fd, -1, ret);
}

/* dir/kallsyms written and loaded: unsorted on purpose; data symbols ('d', 'b') are not code */
static int load_test_kallsyms(const char *dir, char *path, size_t path_size, KernelSymbols **ret)
{
	int r;

	snprintf(path, path_size, "%s/kallsyms", dir);
	write_file(path, "w",
		   "ffffffff81002000 T vfs_write\n"
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81001000 t do_syscall_64\n"
		   "ffffffff81001800 d some_data\n"
		   "ffffffffc0a00000 t ext4_file_write_iter\t[ext4]\n"
		   "ffffffffc0a00400 t ext4_buffered_write_iter\t[ext4]\n");
	r = load_kallsyms_file(path, ret);
	CHECK(r >= 0, "kernel_symbols_load: %s", strerror(-r));
	return r;
}

static void test_kallsyms(const char *dir)
{
	char path[512];
	KernelSymbols *k = NULL;
	const char *name = NULL, *module = NULL;
	uint64_t start = 0;
	int r;

	r = load_test_kallsyms(dir, path, sizeof(path), &k);
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
	CHECK(load_kallsyms_file(path, &k) == -ENODATA && !k, "zeroed kallsyms accepted");

	/* the real one, when readable: every kernel has vfs_write */
	if (kernel_symbols_load_running(&target_file_opener_default, &k) >= 0) {
		CHECK(kernel_symbols_count(k) > 1000, "only %zu kernel symbols",
		      kernel_symbols_count(k));
		if (access("/sys/kernel/notes", R_OK) == 0)
			CHECK(kernel_symbols_build_id(k) &&
				      strlen(kernel_symbols_build_id(k)) >= 16,
			      "no kernel build-id from /sys/kernel/notes");
		kernel_symbols_free(k);
	}
}

/* The same build-id and answers from two KernelSymbols for every address in 'addrs'. */
static void check_same_lookups(const KernelSymbols *a, const KernelSymbols *b,
			       const uint64_t *addrs, size_t n, const char *what)
{
	CHECK(!kernel_symbols_build_id(a) == !kernel_symbols_build_id(b) &&
		      (!kernel_symbols_build_id(a) ||
		       strcmp(kernel_symbols_build_id(a), kernel_symbols_build_id(b)) == 0),
	      "%s: build-id %s, expected %s", what, kernel_symbols_build_id(b) ?: "-",
	      kernel_symbols_build_id(a) ?: "-");
	for (size_t i = 0; i < n; i++) {
		const char *na = NULL, *nb = NULL, *ma = NULL, *mb = NULL;
		uint64_t sa = 0, sb = 0;
		int ra = kernel_symbols_lookup(a, addrs[i], &na, &ma, &sa);
		int rb = kernel_symbols_lookup(b, addrs[i], &nb, &mb, &sb);

		CHECK(ra == rb && (ra < 0 || (strcmp(na, nb) == 0 && strcmp(ma, mb) == 0 &&
					      sa == sb)),
		      "%s: 0x%" PRIx64 " -> %s %s (r=%d), expected %s %s (r=%d)", what, addrs[i],
		      nb ?: "-", mb ?: "-", rb, na ?: "-", ma ?: "-", ra);
	}
}

/* 'k' as a table in a new file of 'dir'; its descriptor (read-write, at offset 0). */
static int table_file(const KernelSymbols *k, const char *dir)
{
	char path[512];
	int fd, r;

	snprintf(path, sizeof(path), "%s/table", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = kernel_symbols_write_table(k, fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/*
 * 'k' as a table in a sealed memfd (as KernelTable hands it out: loaded by mapping it), with
 * 'size' bytes of 'data' at 'offset' first when 'data' is not NULL; its descriptor.
 */
static int sealed_table(const KernelSymbols *k, off_t offset, const void *data, size_t size)
{
	int fd = memfd_create("test-kallsyms", MFD_CLOEXEC | MFD_ALLOW_SEALING), r;

	if (fd < 0)
		return -errno;
	r = kernel_symbols_write_table(k, fd);
	if (r >= 0 && data && pwrite(fd, data, size, offset) != (ssize_t)size)
		r = -errno;
	if (r >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* Damage the table in 'fd' at 'offset' with 'size' bytes of 'data': the load must refuse it. */
static void check_damaged(int fd, off_t offset, const void *data, size_t size, const char *what)
{
	_cleanup_free_ char *saved = malloc(size);
	KernelSymbols *k = NULL;
	int r;

	if (!saved || pread(fd, saved, size, offset) != (ssize_t)size ||
	    pwrite(fd, data, size, offset) != (ssize_t)size) {
		CHECK(false, "%s: cannot damage the table: %m", what);
		return;
	}
	r = kernel_symbols_load(fd, -1, &k);
	CHECK(r == -EBADMSG && !k, "%s: loaded with r=%d, expected -EBADMSG", what, r);
	kernel_symbols_free(k);
	CHECK(pwrite(fd, saved, size, offset) == (ssize_t)size, "%s: cannot restore", what);
}

static void test_table_file(const char *dir)
{
	static const uint64_t addrs[] = { 0xffffffff80000000, 0xffffffff81000000,
					  0xffffffff81001900, 0xffffffff81002abc,
					  0xffffffffc0a00410, 0xffffffffc0a00400 + (64U << 20) };
	/* header: magic[16], n_symbols, names_size, build_id[48]; then {addr, name, module} */
	const off_t symbols = 16 + 8 + 8 + 48;
	char path[512];
	KernelSymbols *text = NULL, *table = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	uint64_t u64;
	uint32_t u32;
	int r;

	r = load_test_kallsyms(dir, path, sizeof(path), &text);
	if (r < 0)
		return;
	fd = table_file(text, dir);
	CHECK(fd >= 0, "kernel_symbols_write_table: %s", strerror(-fd));
	if (fd < 0)
		goto out;
	r = kernel_symbols_load(fd, -1, &table);
	CHECK(r >= 0, "the table does not load: %s", strerror(-r));
	if (r >= 0) {
		CHECK(kernel_symbols_count(table) == kernel_symbols_count(text),
		      "table file: %zu symbols, expected %zu", kernel_symbols_count(table),
		      kernel_symbols_count(text));
		check_same_lookups(text, table, addrs, ELEMENTSOF(addrs), "table file");
	}

	/* sealed (mapped, not copied): the same lookups; a damaged symbol refused on lookup */
	{
		_cleanup_close_ int sealed = sealed_table(text, 0, NULL, 0);
		KernelSymbols *mapped = NULL;

		u32 = 1U << 30;
		r = sealed < 0 ? sealed : kernel_symbols_load(sealed, -1, &mapped);
		CHECK(r >= 0, "the sealed table does not load: %s", strerror(-r));
		if (r >= 0)
			check_same_lookups(text, mapped, addrs, ELEMENTSOF(addrs), "sealed table");
		kernel_symbols_free(mapped);
		mapped = NULL;
		safe_close(sealed);
		/* its first symbol's name past the names: found as that symbol is looked up */
		sealed = sealed_table(text, symbols + 8, &u32, sizeof(u32));
		r = sealed < 0 ? sealed : kernel_symbols_load(sealed, -1, &mapped);
		CHECK(r >= 0, "a sealed table with a name past the names does not load: r=%d", r);
		if (r >= 0) {
			const char *name = NULL;

			r = kernel_symbols_lookup(mapped, 0xffffffff81000010, &name, NULL, NULL);
			CHECK(r == -EBADMSG && !name, "its damaged symbol looked up: r=%d", r);
			r = kernel_symbols_lookup(mapped, 0xffffffff81001010, &name, NULL, NULL);
			CHECK(r == 0 && name && strcmp(name, "do_syscall_64") == 0,
			      "its next symbol looked up: r=%d, %s", r, name ?: "(none)");
		}
		kernel_symbols_free(mapped);
	}

	/* damaged tables are refused, never read past their ends */
	u64 = 1000;
	check_damaged(fd, 16, &u64, sizeof(u64), "more symbols than the file holds");
	u64 = 0;
	check_damaged(fd, 16 + 8, &u64, sizeof(u64), "no names");
	u32 = 1U << 30;
	check_damaged(fd, symbols + 8, &u32, sizeof(u32), "a name past the names");
	u64 = 0xffffffffffff0000;
	check_damaged(fd, symbols, &u64, sizeof(u64), "unsorted symbols");
	CHECK(fstat(fd, &st) == 0 && ftruncate(fd, st.st_size - 1) == 0, "truncate: %m");
	kernel_symbols_free(table);
	table = NULL;
	r = kernel_symbols_load(fd, -1, &table);
	CHECK(r == -EBADMSG && !table, "a truncated table loaded (r=%d)", r);
out:
	kernel_symbols_free(table);
	kernel_symbols_free(text);
}

/* The table of 'store' opened by a new KernelTable: its symbol count (0: not loaded). */
static size_t kernel_table_count(const SymbolCacheStore *store)
{
	_cleanup_(kernel_table_freep) KernelTable *t = NULL;
	_cleanup_close_ int fd = -1;
	KernelSymbols *k = NULL;
	size_t n;

	if (kernel_table_new(store, &t) < 0)
		return 0;
	fd = kernel_table_open(t);
	if (fd < 0 || kernel_symbols_load(fd, -1, &k) < 0)
		return 0;
	n = kernel_symbols_count(k);
	kernel_symbols_free(k);
	return n;
}

/*
 * Across restarts: read from the kernel once and stored, then from the store;
 * a damaged stored table is read again from the kernel.
 */
static void test_kernel_table_store(void)
{
	MemoryStore ms = { 0 };
	SymbolCacheStore store = { memory_load, memory_save, &ms };
	size_t first, n;

	first = kernel_table_count(&store);
	CHECK(first > 1000 && ms.saves == 1 && ms.scope == SYMBOL_SCOPE_SHARED,
	      "first table: %zu symbols, %u saves, scope %" PRIu32, first, ms.saves, ms.scope);
	n = kernel_table_count(&store);
	CHECK(n == first && ms.saves == 1 && ms.loads == 2,
	      "after a restart: %zu symbols, %u saves, %u loads", n, ms.saves, ms.loads);
	if (ms.size > 100)
		memset((char *)ms.data + ms.size - 100, 0xff, 100); /* the names' end */
	n = kernel_table_count(&store);
	CHECK(n > 1000 && ms.saves == 2 && ms.loads == 3,
	      "a damaged stored table: %zu symbols, %u saves, %u loads", n, ms.saves, ms.loads);
	free(ms.data);
}

/* The running kernel's table: what /proc/kallsyms says, sealed, handed out read-only. */
static void test_kernel_table(void)
{
	_cleanup_(kernel_table_freep) KernelTable *t = NULL;
	TargetFilePolicy policy = { 0 };
	TargetFileRequest req = { .kind = TARGET_FILE_KALLSYMS };
	KernelSymbols *running = NULL, *table = NULL;
	uint64_t addrs[4096];
	size_t n = 0;
	int r, r_running, fd, seals;

	r_running = kernel_symbols_load_running(&target_file_opener_default, &running);
	CHECK(r_running >= 0, "cannot load /proc/kallsyms: %s", strerror(-r_running));
	r = kernel_table_new(NULL, &t);
	CHECK(r >= 0, "kernel_table_new: %s", strerror(-r));
	if (r < 0 || r_running < 0)
		goto out;

	/* the fd profd hands out for KALLSYMS when its policy has the table */
	policy.kernel_table = t;
	fd = target_file_open(&req, &policy);
	CHECK(fd >= 0, "KALLSYMS with a table: %s", strerror(-fd));
	if (fd < 0)
		goto out;
	r = kernel_symbols_load(fd, -1, &table);
	CHECK(r >= 0, "the kernel table does not load: %s", strerror(-r));
	CHECK(write(fd, "x", 1) < 0, "the kernel table's descriptor is writable");
	seals = fcntl(fd, F_GET_SEALS);
	CHECK(seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SEAL),
	      "the kernel table is not sealed (seals %#x)", seals);
	close(fd);
	if (r >= 0) {
		/*
		 * Some core kernel addresses and the bytes just past them: module
		 * and BPF symbols ("[bpf]") come and go between two reads.
		 */
		FILE *f = fopen("/proc/kallsyms", "re");
		char line[512];

		for (size_t i = 0; f && n + 2 <= ELEMENTSOF(addrs) && fgets(line, sizeof(line), f);
		     i++) {
			uint64_t a = strtoull(line, NULL, 16);

			if (i % 64 == 0 && !strchr(line, '[')) {
				addrs[n++] = a;
				addrs[n++] = a + 3;
			}
		}
		if (f)
			fclose(f);
		CHECK(n > 100, "only %zu addresses from /proc/kallsyms", n);
		check_same_lookups(running, table, addrs, n, "kernel table");
	}

	/* callers not entitled to kernel addresses get neither */
	policy.no_kernel_symbols = true;
	fd = target_file_open(&req, &policy);
	CHECK(fd == -EPERM, "KALLSYMS refused by the policy gave %d", fd);
	if (fd >= 0)
		close(fd);
out:
	kernel_symbols_free(table);
	kernel_symbols_free(running);
}

/* An opener that serves one perf map file, as profd serves the target's. */
static int open_test_map(const TargetFileRequest *req, void *userdata)
{
	int fd;

	if (req->kind != TARGET_FILE_PERF_MAP || req->pid != 1234)
		return -EINVAL;
	fd = open(userdata, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void test_perf_map(const char *dir)
{
	char path[512];
	TargetFileOpener opener = { open_test_map, path };
	PerfMap *m = NULL;
	const char *name = NULL;
	uint64_t start = 0;
	int r;

	snprintf(path, sizeof(path), "%s/perf-1234.map", dir);
	r = perf_map_new(&opener, 1234, 0, &m);
	CHECK(r >= 0, "perf_map_new: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(strcmp(perf_map_name(m), "/tmp/perf-1234.map") == 0, "map named %s",
	      perf_map_name(m));
	CHECK(perf_map_lookup(m, 0x1000, &name, NULL) == -ENOENT && !perf_map_exists(m),
	      "lookup without a map file");
	write_file(path, "w",
		   "7f0000001000 40 jit_spin_loop\n7f0000002000 100 LazyCompile:*foo bar.js:3\n"
		   "7f0000004000 10 old_name\n7f0000004000 10 new_name\n7f0000005000 10 partial");
	/* a map that appears later is opened on a miss, at most every 250 ms */
	usleep(300 * 1000);
	r = perf_map_lookup(m, 0x7f0000001010, &name, &start);
	CHECK(r == 0 && strcmp(name, "jit_spin_loop") == 0 && start == 0x7f0000001000,
	      "0x7f0000001010 -> %s", r == 0 ? name : strerror(-r));
	r = perf_map_lookup(m, 0x7f00000020ff, &name, NULL);
	CHECK(r == 0 && strcmp(name, "LazyCompile:*foo bar.js:3") == 0,
	      "names with spaces: %s", r == 0 ? name : strerror(-r));
	CHECK(perf_map_lookup(m, 0x7f0000001040, &name, NULL) == -ENOENT, "past the symbol's size");
	r = perf_map_lookup(m, 0x7f0000004000, &name, NULL);
	CHECK(r == 0 && strcmp(name, "new_name") == 0, "re-announced region: %s",
	      r == 0 ? name : strerror(-r));
	/* a line still being written is not taken until its newline */
	CHECK(perf_map_lookup(m, 0x7f0000005000, &name, NULL) == -ENOENT, "partial line taken");
	/* a JIT appends as it compiles: the new symbols are found without a new PerfMap */
	write_file(path, "a", "_done\n7f0000003000 20 jit_later\n");
	r = perf_map_lookup(m, 0x7f0000003004, &name, NULL);
	CHECK(r == 0 && strcmp(name, "jit_later") == 0, "appended symbol: %s",
	      r == 0 ? name : strerror(-r));
	r = perf_map_lookup(m, 0x7f0000005004, &name, NULL);
	CHECK(r == 0 && strcmp(name, "partial_done") == 0, "completed line: %s",
	      r == 0 ? name : strerror(-r));
	perf_map_free(m);

	/* named as the target knows itself in its pid namespace */
	r = perf_map_new(&opener, 1234, 7, &m);
	CHECK(r >= 0 && strcmp(perf_map_name(m), "/tmp/perf-7.map") == 0, "namespace pid name");
	perf_map_free(m);
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

int main(void)
{
	char dir[] = "/tmp/profd-symbols-XXXXXX";
	char cmd[64];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	test_kallsyms(dir);
	test_table_file(dir);
	test_kernel_table();
	test_kernel_table_store();
	test_perf_map(dir);
	test_demangle();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return test_result();
}
