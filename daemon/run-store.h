/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The stored run records. Each lives in its own file of the state directory
 * (so it survives a restart); memory holds what listing needs (run id,
 * owner, status, ...), the record itself until its file is durable, and the
 * records last stored or read up to a byte budget (run-cache.h).
 *
 * A file is <dir>/<seq>.run: one header line "profd-run-v1 owner=UID
 * finished_usec=USEC" followed by the record as compact keyhog-profile-v1
 * JSON. The 16-hex-digit sequence number orders runs by age and keeps file
 * names independent of client-chosen run ids.
 *
 * Run ids are per owner: two uids may use the same id without seeing each
 * other's run (DESIGN.md §8: "exists but not yours" looks like "does not
 * exist"). Limits: runs and bytes for everyone and per uid (root has no
 * quota). A uid over its quota loses its own oldest runs; when everyone
 * together is over the limit, the uid holding the most loses its oldest.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "cleanup.h"
#include "record.h"
#include "run-cache.h"

typedef struct StoredRun {
	char *run_id;
	uid_t owner;
	uint64_t seq;
	uint64_t finished_usec;
	RunState status;
	char *source_kind;
	char *workload_class;
	uint64_t wall_time_ns;
	size_t json_size;   /* bytes of the record's compact JSON */
	char *pending_json; /* the record until its file is durable, then NULL */
	/* private to the store */
	bool superseded; /* a newer run with the same owner and id is being saved */
	bool deleting;   /* its removal is being made durable */
	RunCacheEntry cached; /* the record kept in memory while visible, see run_store_json() */
} StoredRun;

typedef struct RunStoreLimits {
	uint32_t max_runs, max_runs_per_user;
	uint64_t max_bytes, max_bytes_per_user;
	uint64_t cache_bytes; /* records' JSON kept in memory (run-cache.h); 0: none */
} RunStoreLimits;

/* A sanity bound for reading run files back, whatever MaxRecordBytes says today. */
#define RUN_STORE_FILE_MAX ((size_t)128 << 20)

typedef struct RunStore RunStore;

/*
 * A store in 'dir_fd' (duplicated). File writes happen on a thread of the
 * store whose completions arrive on 'event', so no bus client waits for
 * another's fsync.
 */
int run_store_new(int dir_fd, const RunStoreLimits *limits, sd_event *event, RunStore **ret);
RunStore *run_store_free(RunStore *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunStore *, run_store_free);

/*
 * Called for every file that could not be loaded, with what was wrong and
 * whether it could be renamed to NAME.corrupt (set_aside_error 0) or not.
 */
typedef void (*RunStoreCorruptFn)(const char *name, const char *reason, int set_aside_error,
				  void *userdata);
/*
 * Load every run file; bad ones (including records profd would refuse today,
 * see caller-text.h) are set aside, never fatal. Returns the runs loaded.
 */
int run_store_load(RunStore *s, size_t max_record_bytes, RunStoreCorruptFn on_corrupt,
		   void *userdata);

/* Called on the event loop once a change is durable (error 0) or could not be made. */
typedef void (*RunStoreDoneFn)(int error, void *userdata);

/*
 * Store 'p' for 'owner', replacing the owner's run with the same id, and
 * evict as the limits say. The run is visible at once (*ret, until the next
 * change of the store); its file is written in the background and 'done'
 * (may be NULL) says when it is durable. If the write fails the run is
 * forgotten again (a replaced run comes back). -EFBIG when the record alone
 * is over the byte limit or the owner's byte quota.
 */
int run_store_put(RunStore *s, const RunProfile *p, uid_t owner, uint64_t finished_usec,
		  const StoredRun **ret, RunStoreDoneFn done, void *userdata);
/* The same with 'p' already serialised compactly as 'json' (taken over, also on failure). */
int run_store_put_json(RunStore *s, const RunProfile *p, char *json, uid_t owner,
		       uint64_t finished_usec, const StoredRun **ret, RunStoreDoneFn done,
		       void *userdata);

/*
 * The run 'caller' sees under 'run_id': its own; for root its own, else the
 * newest of any owner. NULL when there is none.
 */
const StoredRun *run_store_find(const RunStore *s, uid_t caller, const char *run_id);

/* Remove 'run'; it disappears at once and 'done' says when that is durable (if not, it is back). */
int run_store_delete(RunStore *s, const StoredRun *run, RunStoreDoneFn done, void *userdata);

/*
 * The record JSON of run 'seq' from its file (not for pending runs).
 * Thread-safe: it only reads the file. -ENOENT when the run is gone.
 */
int run_store_read(const RunStore *s, uint64_t seq, size_t max, char **ret_json, size_t *ret_size);

/*
 * The record JSON of 'run' (just found by run_store_find()) if it is in
 * memory: not yet durable, or kept since it was last stored or read. NULL
 * otherwise: then run_store_read() it on a worker and run_store_keep() it.
 */
const char *run_store_json(RunStore *s, const StoredRun *run);
/* Keep 'json' of 'size' bytes, read from run 'seq''s file, in memory (taken over) if that run is still visible. */
void run_store_keep(RunStore *s, uint64_t seq, char *json, size_t size);

/* Bytes of record JSON kept in memory besides the runs not yet durable. */
uint64_t run_store_kept_bytes(const RunStore *s);

/* Every run, oldest first, including ones being replaced or deleted: see stored_run_visible(). */
size_t run_store_count(const RunStore *s);
const StoredRun *run_store_at(const RunStore *s, size_t i);
bool stored_run_visible(const StoredRun *r);
/* Visible runs of 'owner', or of everyone for (uid_t)-1. */
size_t run_store_count_visible(const RunStore *s, uid_t owner);
