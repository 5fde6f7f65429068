/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What profd and its sandboxed unwinder (profd-unwinder, one per caller uid)
 * say to each other, over a SOCK_SEQPACKET socket pair: fixed-size messages
 * without pointers, descriptors alongside (SCM_RIGHTS). Samples do not go
 * through the socket: each session's records are in a backlog (shared memory,
 * lib/engine/collector/backlog.h) the unwinder consumes.
 *
 * profd -> unwinder: SESSION_START (fds: backlog memfd, eventfd), SESSION_STATE (fd: a
 *                    memfd of records; right after the SESSION_START of a session
 *                    another unwinder had when it died), SESSION_CANCEL,
 *                    FILE_REPLY (fd on success; the reply to FILE_REQUEST and
 *                    STORE_LOAD), PROCESS_REPLY, PROBE_OPEN (a test of the sandbox)
 * unwinder -> profd: FILE_REQUEST, PROCESS_REQUEST (a process of a session of
 *                    many: the pid it knows itself by), PROGRESS, RESULT (fds: a memfd holding the
 *                    profile file, profile-file.h, then one holding the stack-quality counts,
 *                    stack_quality_to_wire(), when it has them), PROBE_REPLY,
 *                    STORE_LOAD / STORE_SAVE (fd: a memfd holding the module
 *                    file): the symbol cache on disk, of the unwinder's own
 *                    uid only (state/symbols/<uid>/, symbol-store.h)
 *
 * Either side checks a message's type and exact size; profd trusts nothing
 * the unwinder says (see unwinder-pool.c).
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target-files.h"

typedef enum UnwinderMessageType {
	UNWINDER_SESSION_START = 1,
	UNWINDER_SESSION_CANCEL,
	UNWINDER_FILE_REPLY,
	UNWINDER_PROBE_OPEN,
	UNWINDER_PROCESS_REPLY,
	UNWINDER_SESSION_STATE,
	UNWINDER_FILE_REQUEST = 101,
	UNWINDER_PROGRESS,
	UNWINDER_RESULT,
	UNWINDER_PROBE_REPLY,
	UNWINDER_STORE_LOAD,
	UNWINDER_STORE_SAVE,
	UNWINDER_PROCESS_REQUEST,
} UnwinderMessageType;

#define UNWINDER_MODE_DWARF 1U /* flags: unwind the stack copies (else the FP callchain) */
#define UNWINDER_KERNEL 2U     /* flags: kernel frames wanted (and kallsyms may be asked for) */
/* flags: the session goes on from where an unwinder that died left its backlog; nothing of it is
 * taken before its SESSION_STATE came */
#define UNWINDER_RESUMED 4U

typedef struct UnwinderSessionStart {
	uint32_t type;
	uint32_t flags;
	uint64_t session;
	uint32_t pid;    /* the target, in profd's pid namespace; 0: a cgroup's processes */
	uint32_t ns_pid; /* the same in its own (the perf map's name) */
	uint32_t owner;  /* the caller's uid (symbol cache scope) */
	uint32_t sample_id_all;
	uint64_t sample_type, sample_regs_user;
	uint64_t period_nanos;
	uint32_t stack_bytes; /* copied per sample (DWARF mode): what RESULT's stack_needed weighs */
	uint32_t pad;
	uint64_t cache_max_bytes; /* the symbol cache's cap (SymbolCacheMaxBytes); 0: its default */
} UnwinderSessionStart;

/*
 * SESSION_STATE: a sealed memfd of records (MMAP2, COMM) that tell a resumed
 * session's builder what the records the dead unwinder took said of the target.
 */
typedef struct UnwinderSessionState {
	uint32_t type, pad;
	uint64_t session;
} UnwinderSessionState;

/* The most bytes of records a SESSION_STATE memfd may hold. */
#define UNWINDER_STATE_MAX (256ULL << 20)

typedef struct UnwinderSessionCancel {
	uint32_t type, pad;
	uint64_t session;
} UnwinderSessionCancel;

typedef struct UnwinderFileRequest {
	uint32_t type, pad;
	uint64_t session;
	uint64_t cookie; /* echoed in the reply */
	TargetFileRequest request;
} UnwinderFileRequest;

/* Every reply to a request starts like this one. */
typedef struct UnwinderFileReply {
	uint32_t type;
	int32_t error; /* 0: the fd came along */
	uint64_t cookie;
} UnwinderFileReply;

/*
 * A session of many processes (pid 0): the pid process 'pid' has in its own
 * namespace (its perf map's name), which the unwinder cannot read without
 * /proc; answered only for a process of that session.
 */
typedef struct UnwinderProcessRequest {
	uint32_t type;
	uint32_t pid; /* in profd's pid namespace, as the records give it */
	uint64_t session;
	uint64_t cookie; /* echoed in the reply */
} UnwinderProcessRequest;

typedef struct UnwinderProcessReply {
	uint32_t type;
	int32_t error;
	uint64_t cookie;
	uint32_t ns_pid;
	uint32_t pad;
} UnwinderProcessReply;

/* PROGRESS and RESULT (RESULT: the profile's memfd along, unless error; then the
 * stack-quality counts' memfd, of a one-process session) */
typedef struct UnwinderStats {
	uint32_t type;
	int32_t error;
	uint64_t session;
	uint64_t samples, unwind_failures, truncated_stacks;
	uint64_t cpu_nanos;
	uint32_t warm; /* RESULT: 1 when an earlier session had resolved the executable */
	/*
	 * RESULT: the stack copy the walks needed (stack_resolver_stack_bytes_needed()
	 * with the session's stack_bytes), 0 unknown. A hint for the program's next
	 * sessions (adaptive stack copy): profd clamps it (collector_consumer_done()).
	 */
	uint32_t stack_needed;
} UnwinderStats;

/*
 * STORE_LOAD (answered by a FILE_REPLY with 'cookie') and STORE_SAVE (the
 * file's memfd along, no reply): a module file of the symbol cache, by its
 * name (SYMBOL_FILE_NAME_MAX: lower-case hex), in the unwinder's uid's directory.
 */
#define UNWINDER_STORE_NAME_MAX 40
typedef struct UnwinderStoreFile {
	uint32_t type, pad;
	uint64_t cookie;
	char name[UNWINDER_STORE_NAME_MAX]; /* NUL-terminated */
} UnwinderStoreFile;

/* The largest module file an unwinder may save or be handed. */
#define UNWINDER_STORE_FILE_MAX (256ULL << 20)

#define UNWINDER_PROBE_PATH_MAX 256

typedef struct UnwinderProbe {
	uint32_t type, pad;
	char path[UNWINDER_PROBE_PATH_MAX]; /* NUL-terminated */
} UnwinderProbe;

typedef struct UnwinderProbeReply {
	uint32_t type;
	int32_t error; /* what openat() gave: 0 when it opened (the sandbox failed) */
} UnwinderProbeReply;

/* The largest message, for receive buffers. */
#define UNWINDER_MESSAGE_MAX sizeof(UnwinderFileRequest)

/* Descriptors one message carries at most. */
#define UNWINDER_FDS_MAX 2

/* Send 'size' bytes as one message, with the descriptors 'fds' (n_fds <= 2) alongside. */
int unwinder_send(int sock, const void *msg, size_t size, const int *fds, size_t n_fds);
/*
 * Receive one message into 'buf' (UNWINDER_MESSAGE_MAX bytes): its size, with
 * the descriptors that came along in ret_fds (-1 for none; more than two are
 * refused, every one closed). 0 at end of file, -EAGAIN when none waits
 * (MSG_DONTWAIT), -EBADMSG for a truncated one.
 */
ssize_t unwinder_recv(int sock, void *buf, int flags, int ret_fds[UNWINDER_FDS_MAX]);
