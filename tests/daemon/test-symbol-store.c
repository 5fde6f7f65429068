/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The on-disk symbol cache's directory (daemon/symbol-store.c) on a real
 * directory: per-scope subdirectories, what a load finds, the caps (a uid
 * keeps a quarter at most, everyone together the whole), least recently used
 * files going first, a new store finding what an earlier one left, and leftover
 * temporary files removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "symbol-store.h"
#include "test-util.h"

#define CAP 40000
#define FILE_BYTES 3000

static ModuleIdentity id_of(uint32_t scope)
{
	return (ModuleIdentity){ .scope = scope };
}

static int save(SymbolStore *s, uint32_t scope, const char *name)
{
	static char data[FILE_BYTES];
	const SymbolCacheStore *i = symbol_store_interface(s);
	ModuleIdentity id = id_of(scope);

	memset(data, name[0], sizeof(data));
	return i->save(i->userdata, &id, name, data, sizeof(data));
}

static bool load(SymbolStore *s, uint32_t scope, const char *name)
{
	const SymbolCacheStore *i = symbol_store_interface(s);
	ModuleIdentity id = id_of(scope);
	_cleanup_free_ void *data = NULL;
	size_t size = 0;

	return i->load(i->userdata, &id, name, &data, &size) >= 0 && size == FILE_BYTES &&
	       ((char *)data)[0] == name[0];
}

static bool exists(int state_fd, const char *path)
{
	struct stat st;

	return fstatat(state_fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int main(void)
{
	char dir[] = "/tmp/profd-symbol-store-XXXXXX", name[32], cmd[64];
	_cleanup_close_ int state_fd = -1;
	SymbolStore *s = NULL;
	struct stat st;
	int r;

	if (!mkdtemp(dir) || (state_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		perror(dir);
		return EXIT_FAILURE;
	}
	r = symbol_store_new(state_fd, CAP, &s);
	CHECK(r >= 0, "symbol_store_new: %s", strerror(-r));
	if (r < 0)
		return test_result();

	/* one directory per scope, private */
	CHECK(save(s, SYMBOL_SCOPE_SHARED, "a0") >= 0 && save(s, 1000, "b0") >= 0, "save failed");
	CHECK(exists(state_fd, "symbols/shared/a0") && exists(state_fd, "symbols/1000/b0"),
	      "files not in symbols/shared and symbols/1000");
	CHECK(fstatat(state_fd, "symbols/1000", &st, 0) == 0 && (st.st_mode & 0777) == 0700,
	      "a uid's directory is not private");
	CHECK(load(s, 1000, "b0") && load(s, SYMBOL_SCOPE_SHARED, "a0"), "a saved file did not load");
	CHECK(!load(s, 1001, "b0") && !load(s, SYMBOL_SCOPE_SHARED, "b0"),
	      "a file loaded from another uid's directory");

	/* a uid keeps a quarter of the cap (3 files); its oldest go, nobody else's */
	for (int i = 1; i <= 5; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		CHECK(save(s, 1000, name) >= 0, "save %s failed", name);
		usleep(10000); /* distinct mtimes */
		/* b0 used again after b2 and after b4: each time it is newer than what goes next */
		if (i == 2 || i == 4) {
			CHECK(load(s, 1000, "b0"), "b0 missing");
			usleep(10000); /* file times are coarse: the refresh must not tie with a save */
		}
	}
	CHECK(load(s, 1000, "b0") && load(s, 1000, "b5") && load(s, 1000, "b4") &&
		      !load(s, 1000, "b1") && !load(s, 1000, "b2"),
	      "not the least recently used files of uid 1000 were evicted");
	CHECK(load(s, SYMBOL_SCOPE_SHARED, "a0"), "uid 1000's files evicted a shared one");
	CHECK(symbol_store_bytes(s) <= CAP, "%llu bytes over a cap of %d",
	      (unsigned long long)symbol_store_bytes(s), CAP);

	/* over the whole cap: the largest directory gives */
	for (int i = 1; i <= 12; i++) {
		snprintf(name, sizeof(name), "a%d", i);
		CHECK(save(s, SYMBOL_SCOPE_SHARED, name) >= 0, "save %s failed", name);
		usleep(2000);
	}
	CHECK(symbol_store_bytes(s) <= CAP, "%llu bytes over a cap of %d",
	      (unsigned long long)symbol_store_bytes(s), CAP);
	CHECK(load(s, SYMBOL_SCOPE_SHARED, "a12") && load(s, 1000, "b5"),
	      "recent files were evicted");
	symbol_store_free(s);

	/* a later run finds the files and their sizes; temporary files left by a crash go */
	r = openat(state_fd, "symbols/1000/b9.tmp", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(r >= 0, "cannot plant a temporary file");
	safe_close(r);
	r = symbol_store_new(state_fd, CAP, &s);
	CHECK(r >= 0, "symbol_store_new again: %s", strerror(-r));
	if (r >= 0) {
		CHECK(load(s, 1000, "b5") && load(s, SYMBOL_SCOPE_SHARED, "a12"),
		      "files of the earlier run are gone");
		CHECK(symbol_store_bytes(s) > 0 && symbol_store_bytes(s) <= CAP,
		      "%llu bytes found", (unsigned long long)symbol_store_bytes(s));
		CHECK(!exists(state_fd, "symbols/1000/b9.tmp"), "a leftover temporary file stayed");
		symbol_store_free(s);
	}
	/* a smaller cap trims at start */
	r = symbol_store_new(state_fd, 4 * FILE_BYTES, &s);
	if (r >= 0) {
		CHECK(symbol_store_bytes(s) <= 4 * FILE_BYTES, "%llu bytes over the new cap",
		      (unsigned long long)symbol_store_bytes(s));
		symbol_store_free(s);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return test_result();
}
