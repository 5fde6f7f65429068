/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Adaptive stack copy's memory (daemon/stack-sizes.c) on a real state
 * directory: learned sizes within the caller's ceiling and the kernel's
 * bounds, per uid, kept across a restart, a damaged file set aside, the
 * bound (a uid with its share replaces its own entries), and the key of a
 * running program.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "dwarf-unwind.h"
#include "sampling-session.h"
#include "stack-sizes.h"
#include "test-util.h"

#define CEILING SAMPLING_DEFAULT_STACK_BYTES

static StackSizeKey key(uint32_t uid, uint64_t ino)
{
	return (StackSizeKey){ .uid = uid, .exe = { .dev = 64768, .ino = ino, .size = 4096 } };
}

static uint32_t get(StackSizes *s, uint32_t uid, uint64_t ino)
{
	StackSizeKey k = key(uid, ino);

	return stack_sizes_get(s, &k, CEILING);
}

static int put(StackSizes *s, uint32_t uid, uint64_t ino, uint32_t bytes)
{
	StackSizeKey k = key(uid, ino);

	return stack_sizes_put(s, &k, CEILING, bytes);
}

static void test_learning(int state_fd)
{
	_cleanup_(stack_sizes_freep) StackSizes *s = NULL;
	StackSizeKey k = key(1000, 1);
	int r;

	r = stack_sizes_new(state_fd, &s);
	CHECK(r >= 0, "stack_sizes_new: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(get(s, 1000, 1) == CEILING, "an unknown program copies %u, expected the ceiling",
	      get(s, 1000, 1));
	CHECK(put(s, 1000, 1, 2560) >= 0, "put");
	CHECK(get(s, 1000, 1) == 2560, "learned 2560, copies %u", get(s, 1000, 1));
	CHECK(stack_sizes_get(s, &k, 2048) == 2048, "a lower ceiling is not kept");
	CHECK(get(s, 1001, 1) == CEILING, "another uid's session uses uid 1000's size");
	k.exe.mtime_nsec = 1;
	CHECK(stack_sizes_get(s, &k, CEILING) == CEILING, "a rewritten executable keeps the size");
	CHECK(put(s, 1000, 1, 0) >= 0 && get(s, 1000, 1) == 2560, "a session that learned nothing");
	CHECK(put(s, 1000, 1, 2048) >= 0 && get(s, 1000, 1) == 2560, "a little less is taken");
	CHECK(put(s, 1000, 1, 3072) >= 0 && get(s, 1000, 1) == 3072, "more is not taken");
	CHECK(put(s, 1000, 1, 2560) >= 0 && get(s, 1000, 1) == 3072, "a little less is taken");
	CHECK(put(s, 1000, 1, 2048) >= 0 && get(s, 1000, 1) == 2048, "much less is not taken");
	CHECK(put(s, 1000, 1, 2560) >= 0 && get(s, 1000, 1) == 2560, "more is not taken");
	/* a session with a caller's lower setting ran out of its 1024 bytes: it says nothing */
	k = key(1000, 1);
	CHECK(stack_sizes_put(s, &k, 1024, 2048) >= 0 && get(s, 1000, 1) == 2560,
	      "a session that copied less than the known size lowered it to %u", get(s, 1000, 1));
	CHECK(put(s, 1000, 2, 100) >= 0 && get(s, 1000, 2) == UNWIND_STACK_MIN,
	      "below the minimum: %u", get(s, 1000, 2));
	k = key(1000, 3);
	CHECK(put(s, 1000, 3, 1U << 30) >= 0 && get(s, 1000, 3) == CEILING &&
		      stack_sizes_get(s, &k, 1U << 30) == SAMPLING_MAX_STACK_BYTES,
	      "above the kernel's maximum");
}

static void test_restart(int state_fd)
{
	_cleanup_(stack_sizes_freep) StackSizes *s = NULL;
	struct stat st;
	int r;

	r = stack_sizes_new(state_fd, &s);
	CHECK(r >= 0, "stack_sizes_new again: %s", strerror(-r));
	if (r < 0)
		return;
	CHECK(get(s, 1000, 1) == 2560 && get(s, 1000, 2) == UNWIND_STACK_MIN,
	      "after a restart: %u and %u", get(s, 1000, 1), get(s, 1000, 2));
	CHECK(fstatat(state_fd, STACK_SIZES_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		      S_ISREG(st.st_mode) && (st.st_mode & 077) == 0,
	      "state/%s is not a private regular file", STACK_SIZES_FILE);
}

static void test_damaged(int state_fd)
{
	static const char *const bad[] = {
		"not the magic\n",
		"profd-stack-sizes 1\n1000 1 2 3 4 5\n",          /* a field short */
		"profd-stack-sizes 1\n1000 1 2 3 4 5 2560 junk\n", /* trailing */
		"profd-stack-sizes 1\n1000 1 2 3 4 5 100\n",       /* below the minimum */
		"profd-stack-sizes 1\n1000 1 2 3 4 5 2560",        /* no end of line */
		"profd-stack-sizes 1\n1 1 1 1 1 1 2560\n1 1 1 1 1 1 4096\n", /* twice */
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_(stack_sizes_freep) StackSizes *s = NULL;
		struct stat st;
		int r;

		unlinkat(state_fd, STACK_SIZES_FILE ".corrupt", 0);
		if (write_file_atomic(state_fd, STACK_SIZES_FILE, bad[i], strlen(bad[i])) < 0) {
			CHECK(false, "cannot write a damaged file: %m");
			continue;
		}
		r = stack_sizes_new(state_fd, &s);
		CHECK(r >= 0, "damaged file %zu: stack_sizes_new %s", i, strerror(-r));
		if (r < 0)
			continue;
		CHECK(fstatat(state_fd, STACK_SIZES_FILE ".corrupt", &st, 0) == 0 &&
			      fstatat(state_fd, STACK_SIZES_FILE, &st, 0) < 0,
		      "damaged file %zu not set aside", i);
		CHECK(get(s, 1000, 1) == CEILING && get(s, 1, 1) == CEILING,
		      "damaged file %zu: something was learned from it", i);
		CHECK(put(s, 1000, 1, 3072) >= 0 && get(s, 1000, 1) == 3072,
		      "damaged file %zu: nothing learned after it", i);
	}
}

static void test_bound(void)
{
	_cleanup_(stack_sizes_freep) StackSizes *s = NULL;
	size_t kept = 0, others = 0;

	if (stack_sizes_new(-1, &s) < 0) {
		CHECK(false, "stack_sizes_new in memory");
		return;
	}
	for (uint64_t i = 0; i < 10; i++)
		put(s, 1, i, 4096);
	/* uid 2 runs through twice the table: it replaces its own, never uid 1's */
	for (uint64_t i = 0; i < 2 * STACK_SIZES_MAX; i++)
		put(s, 2, i, 3072);
	for (uint64_t i = 0; i < 10; i++)
		others += get(s, 1, i) == 4096;
	for (uint64_t i = 0; i < 2 * STACK_SIZES_MAX; i++)
		kept += get(s, 2, i) == 3072;
	CHECK(others == 10, "uid 1 kept %zu of its 10 sizes", others);
	CHECK(kept == STACK_SIZES_MAX - 10, "uid 2 has %zu sizes, expected %u", kept,
	      STACK_SIZES_MAX - 10);
	CHECK(get(s, 2, 2 * STACK_SIZES_MAX - 1) == 3072 && get(s, 2, 0) == CEILING,
	      "uid 2 lost its newest sizes rather than its oldest");
}

static void test_key(void)
{
	StackSizeKey k, again;
	struct stat st;

	CHECK(stack_size_key_of_pid(getpid(), 42, &k) == 0 && stat("/proc/self/exe", &st) == 0 &&
		      k.uid == 42 && k.exe.ino == st.st_ino && k.exe.size == (uint64_t)st.st_size,
	      "the key of this test is not its executable's");
	again = k;
	CHECK(stack_size_key_of_pid(getpid(), 42, &again) == 0 && memcmp(&k, &again, sizeof(k)) == 0,
	      "two keys of the same program differ");
	CHECK(stack_size_key_of_pid(0, 42, &k) < 0, "a key for pid 0");
}

int main(void)
{
	char dir[] = "/tmp/profd-stack-sizes-XXXXXX", cmd[64];
	_cleanup_close_ int state_fd = -1;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	state_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (state_fd < 0) {
		perror(dir);
		return EXIT_FAILURE;
	}
	test_learning(state_fd);
	test_restart(state_fd);
	test_damaged(state_fd);
	test_bound();
	test_key();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return test_result();
}
