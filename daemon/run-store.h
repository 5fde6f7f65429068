/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The stored run records: in memory for listing and fetching, each also in
 * its own file of the state directory so they survive a restart.
 *
 * A file is <dir>/<seq>.run: one header line "profd-run-v1 owner=UID
 * finished_usec=USEC" followed by the record as compact keyhog-profile-v1
 * JSON. The 16-hex-digit sequence number orders runs by age (the oldest is
 * evicted first) and keeps file names independent of client-chosen run ids.
 */

#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "record.h"

typedef struct StoredRun {
	char *run_id;
	uid_t owner;
	uint64_t seq;
	uint64_t finished_usec;
	RunState status;
	char *source_kind;
	char *workload_class;
	uint64_t wall_time_ns;
	char *json; /* compact, as record_serialise() writes it */
	size_t json_size;
	struct StoredRun *hash_next; /* private: the run store's index */
} StoredRun;

typedef struct RunStore RunStore;

/*
 * Create 'dir' if needed. File writes happen on a thread of the store whose
 * completions arrive on 'event', so no bus client waits for another's fsync.
 */
int run_store_new(const char *dir, uint32_t max_runs, sd_event *event, RunStore **ret);
RunStore *run_store_free(RunStore *s);
void run_store_freep(RunStore **s);

/* Called for every file that could not be loaded, after it was renamed to *.corrupt. */
typedef void (*RunStoreCorruptFn)(const char *path, const char *reason, void *userdata);
/* Load every run file; bad ones are set aside, never fatal. Returns runs loaded. */
int run_store_load(RunStore *s, size_t max_record_bytes, RunStoreCorruptFn on_corrupt,
		   void *userdata);

/* Called on the event loop once a run's file is durable (error 0) or could not be written. */
typedef void (*RunStoreDoneFn)(int error, void *userdata);

/*
 * Store 'p' for 'owner', replacing a run with the same id, and evict the
 * oldest runs beyond the cap. The run is visible at once (*ret); its file is
 * written in the background and 'done' (may be NULL) says when it is
 * durable. -EPERM when that id belongs to another uid.
 */
int run_store_put(RunStore *s, const RunProfile *p, uid_t owner, uint64_t finished_usec,
		  const StoredRun **ret, RunStoreDoneFn done, void *userdata);
/* NULL when there is no such run. */
const StoredRun *run_store_get(const RunStore *s, const char *run_id);
/* -ENOENT when there is no such run. */
int run_store_delete(RunStore *s, const char *run_id);

/* Oldest first. */
size_t run_store_count(const RunStore *s);
const StoredRun *run_store_at(const RunStore *s, size_t i);
