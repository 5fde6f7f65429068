/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Every file of a target that naming and unwinding read — its mapped ELF
 * files, their separate debug files, its perf map and jitdump files, and the
 * kernel's symbols — is opened through one TargetFileOpener. A request names
 * a file only by what the opener can verify (a kind, the target's pid, an
 * address the target maps, a build-id, a .gnu_debuglink basename), never by a
 * path: the opener derives every path itself, opens it without following a
 * final symlink (and without blocking on a FIFO), checks that it is what the
 * kind says — the very file the target maps, or a regular file owned by the
 * target's uid or root within a size cap (DESIGN.md §8) — and hands back a
 * read-only descriptor. So the side that parses hostile files (the sandboxed
 * unwinder) needs no open() and cannot make profd open anything else.
 *
 * target_file_open() is the implementation that opens in the calling process:
 * profctl --local and the engine's tests use it directly, and profd serves
 * the sandboxed helper's requests with it.
 */

#include <stdbool.h>
#include <stdint.h>

#include "process-maps.h"

typedef enum TargetFileKind {
	TARGET_FILE_MAPPED,    /* the file mapped at 'address' (an ELF module) */
	TARGET_FILE_JITDUMP,   /* the jit-<pid>.dump mapped at 'address' (perf's JIT convention) */
	TARGET_FILE_DEBUGLINK, /* 'name', a .gnu_debuglink basename, of the file mapped at 'address':
				* beside it, in its .debug/, or under a debug directory + its dir */
	TARGET_FILE_BUILD_ID,  /* DEBUGDIR/.build-id/xx/yyyy.debug of 'build_id' */
	TARGET_FILE_DEBUG_ALT, /* the dwz file a .gnu_debugaltlink names ('name', an absolute path):
				* only inside a debug directory */
	TARGET_FILE_PERF_MAP,  /* the target's /tmp/perf-<pid>.map (its pid in its own namespace) */
	TARGET_FILE_KALLSYMS,  /* /proc/kallsyms, when the policy allows kernel symbols */
	TARGET_FILE_KERNEL_NOTES, /* /sys/kernel/notes (the running kernel's build-id), likewise */
	_TARGET_FILE_KIND_MAX,
} TargetFileKind;

#define TARGET_FILE_BUILD_ID_MAX 64
#define TARGET_FILE_NAME_MAX 255

/* Fixed size and without pointers: the sandboxed helper sends it over a socket as it is. */
typedef struct TargetFileRequest {
	uint32_t kind;    /* TargetFileKind */
	uint32_t pid;     /* the target process, in the opener's pid namespace */
	uint64_t address; /* MAPPED, JITDUMP, DEBUGLINK: any address inside the mapping */
	/* MAPPED, JITDUMP, DEBUGLINK: the mapped file's identity as the target's MMAP2 record
	 * gave it (0 = any): never another file mapped at that address before or since */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t build_id_size;
	uint8_t build_id[TARGET_FILE_BUILD_ID_MAX]; /* BUILD_ID */
	char name[TARGET_FILE_NAME_MAX + 1];        /* DEBUGLINK, DEBUG_ALT; NUL-terminated */
} TargetFileRequest;

/*
 * Open what 'request' names. Returns a descriptor (read-only, close-on-exec,
 * owned by the caller) or a negative errno: -ENOENT no such file, -EPERM
 * refused by the rules, -EFBIG over its size cap, -EINVAL a malformed
 * request, -EAGAIN not there yet but being fetched (debuginfod): ask later.
 */
typedef int (*TargetFileOpenFn)(const TargetFileRequest *request, void *userdata);

typedef struct TargetFileOpener {
	TargetFileOpenFn open;
	void *userdata;
} TargetFileOpener;

typedef struct KernelTable KernelTable;

/*
 * A debug file found by build-id, before it is handed over: a descriptor of
 * the same debug info in a form cheaper to read (daemon/inflated-debug.h:
 * its compressed sections inflated once for every caller), or negative to
 * hand over 'fd' itself. Must not block; 'fd' stays the caller's.
 */
typedef struct DebugFileSubstitute {
	int (*substitute)(const TargetFileRequest *request, int fd, void *userdata);
	void *userdata;
} DebugFileSubstitute;

/* Trusted configuration of target_file_open(), never taken from a request. */
typedef struct TargetFilePolicy {
	/* where debug files are looked up; NULL-terminated, NULL = { "/usr/lib/debug", NULL } */
	const char *const *debug_dirs;
	bool no_kernel_symbols; /* refuse KALLSYMS (callers not entitled to kernel addresses) */
	/* KALLSYMS from this table (kernel-table.h) rather than /proc/kallsyms; NULL: none */
	KernelTable *kernel_table;
	/*
	 * Asked for a BUILD_ID no debug directory holds: a descriptor of the file
	 * fetched for it, -EAGAIN while it is being fetched, or -ENOENT. Must not
	 * block (requests are served off the sample path but on profd's loop).
	 * NULL: none (the daemon's debuginfod fetch, daemon/debuginfod-fetch.h).
	 */
	const TargetFileOpener *fetch;
	/* what a BUILD_ID found in a debug directory is handed over as; NULL: the file itself */
	const DebugFileSubstitute *debug_substitute;
} TargetFilePolicy;

/* The uids files of a target may belong to besides root: its real, effective and fs uid. */
typedef struct TargetOwner {
	uint32_t uids[3];
} TargetOwner;

int target_owner_read(uint32_t pid, TargetOwner *ret);

/* Size caps of files the target writes itself (perf caps and owner-checks perf maps too). */
#define TARGET_FILE_PERF_MAP_MAX (256ULL << 20)
#define TARGET_FILE_JITDUMP_MAX (2ULL << 30)
#define TARGET_FILE_DEBUG_MAX (4ULL << 30)

/* TargetFileOpenFn opening in this process; 'userdata' is a const TargetFilePolicy * or NULL. */
int target_file_open(const TargetFileRequest *request, void *userdata);

/*
 * The rules of target_file_open() for a target that may be gone, with what
 * was learnt of it while it ran: its owner and, for DEBUGLINK, the path of
 * the file it mapped at the request's address. MAPPED, JITDUMP and PERF_MAP
 * need the target itself: -ESRCH (TargetFileCache keeps their descriptors).
 */
int target_file_open_remembered(const TargetFileRequest *request, const TargetFilePolicy *policy,
				const TargetOwner *owner, const char *mapped_path);

/* The opener used when none is given: target_file_open() with the default policy. */
extern const TargetFileOpener target_file_opener_default;

static inline int target_file_opener_open(const TargetFileOpener *o, const TargetFileRequest *r)
{
	return o->open(r, o->userdata);
}

/*
 * The file of one of the target's mappings, 'path' being the name its MMAP2
 * record or /proc/PID/maps gave: through the target's root if it still runs,
 * through ours if it is gone, and only ever the very file (device and inode)
 * the mapping has. For openers that know a target's mappings from records
 * (multi-process targets, processes that exited or exec'ed since).
 */
int target_file_open_mapped(uint32_t pid, const ProcessMapping *m, const char *path);

/*
 * Does a mapping come from a file? Anonymous memory has no path in
 * /proc/PID/maps but is "//anon" in perf's MMAP2 records (JIT code lives
 * there); pseudo files ("[vdso]", "[heap]") are not files either.
 */
bool target_mapping_has_file(const ProcessMapping *m);
/* Is 'path' a jitdump file by its name, "jit-<digits>.dump"? */
bool target_file_is_jitdump(const char *path);

/* The target's pid as it knows itself (inside its pid namespace), for names such as
 * /tmp/perf-<pid>.map. For the caller that sets up a resolver; 'pid' when unknown. */
uint32_t target_namespace_pid(uint32_t pid);
