/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernel-table.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "hash.h"
#include "io-util.h"
#include "kernel-symbols.h"

struct KernelTable {
	pthread_mutex_t lock;
	const SymbolCacheStore *store;
	int memfd;     /* sealed; -1: not read yet */
	char name[SYMBOL_FILE_NAME_MAX]; /* of the kernel it holds: boot id and modules */
};

/*
 * The name of the kernel's symbols as they are now: the boot (KASLR moves
 * everything at each) and each module's name, size and address (not its use
 * count, which changes all the time).
 */
static int kernel_name(char ret[SYMBOL_FILE_NAME_MAX])
{
	_cleanup_fclose_ FILE *f = NULL;
	char line[512], boot_id[64] = "";
	uint64_t h1 = HASH_FNV1A_BASIS, h2 = 0x6b616c6c73796d73ULL;

	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return negative_errno();
	if (!fgets(boot_id, sizeof(boot_id), f))
		return -EIO;
	fclose(f);
	h1 = hash_string(h1, boot_id);
	h2 = hash_string(h2, boot_id);
	f = fopen("/proc/modules", "re");
	if (!f && errno != ENOENT) /* absent: a kernel without modules */
		return negative_errno();
	while (f && fgets(line, sizeof(line), f)) {
		char name[128], addr[32];
		unsigned long size;

		if (sscanf(line, "%127s %lu %*s %*s %*s %31s", name, &size, addr) != 3)
			return -EBADMSG;
		h1 = hash_combine(hash_string(h1, name), size);
		h2 = hash_combine(hash_string(h2, addr), size);
	}
	if (f && ferror(f))
		return -EIO;
	snprintf(ret, SYMBOL_FILE_NAME_MAX, "%016" PRIx64 "%016" PRIx64, h1, h2);
	return 0;
}

/* A memfd for a table, its seals to come. */
static int table_memfd(void)
{
	int fd = memfd_create("profd-kallsyms", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	return fd < 0 ? negative_errno() : fd;
}

/* Nobody given the table may change what others read. */
static int table_seal(int fd)
{
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return negative_errno();
	return 0;
}

/* 'size' bytes of 'data' in a new memfd, sealed. */
static int sealed_memfd(const void *data, size_t size, int *ret_fd)
{
	_cleanup_close_ int fd = table_memfd();
	int r;

	if (fd < 0)
		return fd;
	r = write_all(fd, data, size);
	if (r >= 0)
		r = table_seal(fd);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* The store's table of 'name', checked by loading it. */
static int table_from_store(const KernelTable *t, const char *name, int *ret_fd)
{
	ModuleIdentity id = { .scope = SYMBOL_SCOPE_SHARED };
	_cleanup_(kernel_symbols_freep) KernelSymbols *k = NULL;
	_cleanup_free_ void *data = NULL;
	_cleanup_close_ int fd = -1;
	size_t size;
	int r;

	if (!t->store)
		return -ENOENT;
	r = t->store->load(t->store->userdata, &id, name, &data, &size);
	if (r >= 0)
		r = sealed_memfd(data, size, &fd);
	if (r >= 0)
		r = kernel_symbols_load(fd, -1, &k);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* 'fd' (a memfd) as it is now, into the store as 'name': a restart reads no kallsyms. */
static void table_save(const KernelTable *t, const char *name, int fd)
{
	ModuleIdentity id = { .scope = SYMBOL_SCOPE_SHARED };
	struct stat st;
	void *p;

	if (!t->store || fstat(fd, &st) < 0 || st.st_size <= 0)
		return;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	(void)t->store->save(t->store->userdata, &id, name, p, (size_t)st.st_size);
	munmap(p, (size_t)st.st_size);
}

/* /proc/kallsyms (through the default opener: no table of ours) as a table, stored as 'name'. */
static int table_from_kernel(const KernelTable *t, const char *name, int *ret_fd)
{
	_cleanup_(kernel_symbols_freep) KernelSymbols *k = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	r = kernel_symbols_load_running(&target_file_opener_default, &k);
	if (r < 0)
		return r;
	fd = table_memfd();
	if (fd < 0)
		return fd;
	r = kernel_symbols_write_table(k, fd);
	if (r < 0)
		return r;
	table_save(t, name, fd);
	r = table_seal(fd);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int kernel_table_new(const SymbolCacheStore *store, KernelTable **ret)
{
	KernelTable *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	t->store = store;
	t->memfd = -1;
	*ret = t;
	return 0;
}

KernelTable *kernel_table_free(KernelTable *t)
{
	if (!t)
		return NULL;
	safe_close(t->memfd);
	pthread_mutex_destroy(&t->lock);
	free(t);
	return NULL;
}

int kernel_table_open(KernelTable *t)
{
	char name[SYMBOL_FILE_NAME_MAX], path[64];
	int r, fd = -1;

	r = kernel_name(name);
	if (r < 0)
		return r;
	pthread_mutex_lock(&t->lock);
	/* first use, or a module came or went: the stored table of this kernel, else kallsyms */
	if (t->memfd < 0 || strcmp(name, t->name) != 0) {
		r = table_from_store(t, name, &fd);
		if (r < 0)
			r = table_from_kernel(t, name, &fd);
		if (r >= 0) {
			safe_close(t->memfd);
			t->memfd = fd;
			memcpy(t->name, name, sizeof(name));
		}
	}
	/* a description of its own, read-only: a shared offset or write access would be shared */
	if (r >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", t->memfd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		r = fd < 0 ? negative_errno() : fd;
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}
