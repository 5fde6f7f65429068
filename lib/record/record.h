/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The keyhog-profile-v1 run record (docs/record-format.md): the model, strict
 * parsing, serialisation byte-identical to the reference records in
 * tests/fixtures/, the text report, /proc resource snapshots of any pid, and
 * two ways to build a record:
 *  - RunRecorder: a record for one target pid (identity, transitions, resource
 *    samples of that pid). Any number may run at once; the span counters are
 *    not touched. The daemon builds sampling-session records with it.
 *  - SpanSession: the process-global session of an instrumented program:
 *    resources of this process plus the stage spans of span.h. One at a time
 *    (-EBUSY).
 *
 * All functions return negative errno; ret_* outputs are untouched on failure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stage.h"

#define RECORD_SCHEMA "keyhog-profile-v1"

struct json_t;

typedef struct OptU64 {
	bool set; /* false: null */
	uint64_t value;
} OptU64;

typedef struct OptF64 {
	bool set;
	double value;
} OptF64;

#define OPT_U64(v) ((OptU64) { .set = true, .value = (v) })
#define OPT_F64(v) ((OptF64) { .set = true, .value = (v) })

typedef enum CacheState {
	CACHE_STATE_UNKNOWN,
	CACHE_STATE_DISABLED,
	CACHE_STATE_COLD,
	CACHE_STATE_WARM,
	_CACHE_STATE_MAX,
} CacheState;

typedef enum DaemonState {
	DAEMON_STATE_OFF,
	DAEMON_STATE_CLIENT,
	DAEMON_STATE_WORKER,
	DAEMON_STATE_MASS,
	_DAEMON_STATE_MAX,
} DaemonState;

typedef enum RunState {
	RUN_STATE_CREATED,
	RUN_STATE_ACQUIRING,
	RUN_STATE_SCANNING,
	RUN_STATE_RESOLVING,
	RUN_STATE_VERIFYING,
	RUN_STATE_REPORTING,
	RUN_STATE_COMPLETED,
	RUN_STATE_FAILED,
	_RUN_STATE_MAX,
} RunState;

/* Wire names ("warm", "worker", "completed"); NULL when out of range. */
const char *cache_state_to_string(CacheState s);
const char *daemon_state_to_string(DaemonState s);
const char *run_state_to_string(RunState s);
/* The value with this exact wire name, or -EINVAL. */
int cache_state_from_string(const char *name);
int daemon_state_from_string(const char *name);
int run_state_from_string(const char *name);

/*
 * Every struct below that maps to a JSON object carries `extra`: the unknown
 * fields of a parsed record (a jansson object, owned), serialised back after
 * the known ones. NULL when there are none (always for built records).
 */

typedef struct RunIdentity {
	char *run_id; /* "<pid>-<unix ns>-<sequence>" */
	char *binary_version;
	char *detector_digest;
	char *config_digest;
	char *source_kind;
	char *workload_class;
	char *backend_requested;
	char *backend_selected; /* NULL: null */
	CacheState cache_state;
	DaemonState daemon_state;
	uint64_t scanner_threads;
	OptU64 reader_threads;
	uint64_t logical_cpus;
	struct json_t *extra;
} RunIdentity;

typedef struct StateTransition {
	RunState state;
	uint64_t elapsed_ns; /* since the run started */
	struct json_t *extra;
} StateTransition;

typedef struct ResourceSnapshot {
	OptU64 cpu_time_ms; /* user + system */
	OptU64 resident_bytes;
	OptU64 virtual_bytes;
	OptU64 thread_count;
	struct json_t *extra;
} ResourceSnapshot;

typedef struct ResourceSample {
	RunState state;
	uint64_t elapsed_ns;
	ResourceSnapshot snapshot;
	struct json_t *extra;
} ResourceSample;

typedef struct StateMeasurement {
	RunState state;
	uint64_t elapsed_ns;
	OptU64 cpu_time_ms;
	OptU64 aggregate_cpu_milli_percent;
	OptU64 resident_start_bytes;
	OptU64 resident_end_bytes;
	OptU64 threads_start;
	OptU64 threads_end;
	struct json_t *extra;
} StateMeasurement;

typedef struct ResourceUsage {
	ResourceSnapshot start;
	ResourceSnapshot finish;
	OptU64 max_observed_resident_bytes;
	OptU64 max_observed_threads;
	OptF64 aggregate_cpu_percent;
	struct json_t *extra;
} ResourceUsage;

/* schema is always RECORD_SCHEMA, so it is not stored. */
typedef struct RunProfile {
	RunIdentity identity;
	RunState status;
	uint64_t wall_time_ns;
	uint64_t input_bytes;
	uint64_t input_units;
	StageMeasurement *stages; /* non-zero stages, wire order */
	size_t n_stages;
	StateTransition *transitions;
	size_t n_transitions;
	StateMeasurement *states;
	size_t n_states;
	ResourceSample *resource_samples;
	size_t n_resource_samples;
	ResourceUsage resources;
	struct json_t *extra;
} RunProfile;

/* ---- model (record.c) ---- */

/*
 * A fresh identity: run_id from this process's
 * pid, the realtime clock and a process-wide sequence; cache unknown, daemon
 * off, scanner_threads 0, reader_threads and backend_selected null,
 * logical_cpus the CPUs this process may run on. Strings are copied.
 */
int run_identity_new(const char *binary_version,
		     const char *detector_digest,
		     const char *config_digest,
		     const char *source_kind,
		     const char *workload_class,
		     const char *backend_requested,
		     RunIdentity *ret);
/* Free an identity's members and zero it; safe on a zeroed identity. */
void run_identity_done(RunIdentity *identity);
/* Replace a string member (e.g. &id->backend_selected) by a copy of value (NULL allowed). */
int run_identity_set_string(char **field, const char *value);

RunProfile *run_profile_free(RunProfile *p);
void run_profile_freep(RunProfile **p);
#define _cleanup_run_profile_ __attribute__((cleanup(run_profile_freep)))
/* Field-by-field equality, unknown fields included. */
bool run_profile_equal(const RunProfile *a, const RunProfile *b);

/* ---- JSON (record-parse.c, record-json.c) ---- */

/*
 * Strictly parse a keyhog-profile-v1 document (len bytes, need not be NUL
 * terminated). -EINVAL for a refused document, with *ret_error (if not NULL)
 * set to a malloc'd "json.path: reason", e.g. "stages[0].stage: unknown
 * variant \"foo\"". u64 values up to 2^64-1 are kept exactly.
 */
int record_parse(const char *json, size_t len, RunProfile **ret, char **ret_error);
/* serde_json's to_string (compact) or to_string_pretty; no trailing newline. */
int record_serialise(const RunProfile *p, bool pretty, char **ret);

/* ---- text (record-text.c) ---- */

/* The text report (docs/record-format.md), byte for byte (ends with a newline). */
int record_render_text(const RunProfile *p, char **ret);

/* ---- resources (resources.c) ---- */

/*
 * Read CPU time from /proc/<pid>/stat and VmRSS, VmSize, Threads from
 * /proc/<pid>/status (pid 0: this process). Values that cannot be read are
 * null; -ESRCH when the process does not exist (any more) or has exited and
 * is a zombie (its /proc entries no longer describe a running program).
 */
int resource_snapshot_read(pid_t pid, ResourceSnapshot *ret);
/*
 * The same for a cgroup (v2 directory 'dir_fd'): CPU time from cpu.stat's
 * usage_usec, resident bytes from memory.current (null without the memory
 * controller); virtual size and threads are null. -ESRCH when it is gone.
 */
int resource_snapshot_read_cgroup(int dir_fd, ResourceSnapshot *ret);

/* The record's arithmetic (docs/record-format.md), exported for tests and the daemon. */
OptU64 resource_cpu_milli_percent(OptU64 start_cpu_ms, OptU64 finish_cpu_ms, uint64_t elapsed_ns);
OptF64 resource_cpu_percent(OptU64 start_cpu_ms, OptU64 finish_cpu_ms, uint64_t elapsed_ns);

/* ---- building records (run-recorder.c, span-session.c) ---- */

typedef struct RunRecorder RunRecorder;

/*
 * Start recording a run of process pid (0: this process): records "created"
 * at elapsed 0 with a resource snapshot. Takes over *identity's members on
 * success (and zeroes *identity).
 */
int run_recorder_new(pid_t pid, RunIdentity *identity, RunRecorder **ret);
/*
 * The same for a run whose resources are a cgroup's (its v2 directory, dup'ed),
 * or nobody's (cgroup_fd < 0: all null, e.g. the whole machine).
 */
int run_recorder_new_cgroup(int cgroup_fd, RunIdentity *identity, RunRecorder **ret);
/* The identity, to adjust before finishing (backend_selected, cache_state, ...). */
RunIdentity *run_recorder_identity(RunRecorder *r);
/* CLOCK_MONOTONIC nanoseconds when the run started ("created"). */
uint64_t run_recorder_started_ns(const RunRecorder *r);
/* The transitions so far (none once finished: the record has them). */
size_t run_recorder_transitions(const RunRecorder *r, const StateTransition **ret);
/* Record a transition to state with a resource snapshot of the pid. -ESTALE once finished. */
int run_recorder_transition(RunRecorder *r, RunState state);
/* The run's input totals (the daemon: ring bytes and samples read). */
void run_recorder_set_input(RunRecorder *r, uint64_t bytes, uint64_t units);
/*
 * Transition to status and build the record: wall time, per-state
 * measurements and resource usage (docs/record-format.md). The recorder
 * is finished afterwards (free it).
 */
int run_recorder_finish(RunRecorder *r, RunState status, RunProfile **ret);
RunRecorder *run_recorder_free(RunRecorder *r);
void run_recorder_freep(RunRecorder **r);
#define _cleanup_run_recorder_ __attribute__((cleanup(run_recorder_freep)))

typedef struct SpanSession SpanSession;

/*
 * The process-global span session: -EBUSY while
 * another is active. Resets all span counters and enables spans; resources
 * are this process's. Takes over *identity's members on success.
 */
int span_session_start(RunIdentity *identity, SpanSession **ret);
RunIdentity *span_session_identity(SpanSession *s);
int span_session_transition(SpanSession *s, RunState state);
/*
 * Transition to status, disable spans, and build the record from the session
 * counters (stages, input totals); then resets the global counters and
 * releases the session slot. Free the session afterwards. An attached span
 * ring gets the final transition and is detached.
 */
int span_session_finish(SpanSession *s, RunState status, RunProfile **ret);
/*
 * Part of a live run with profd: from now on every session span also writes
 * its interval (tid, stage, begin, end), and every transition its state and
 * time, into the span ring at 'mem' (span-ring.h: shared memory profd made,
 * 'size' bytes), starting with the transitions made so far. -EBADMSG when
 * 'mem' is not a span ring, -EBUSY when one is attached, -ESTALE once finished.
 */
int span_session_attach_ring(SpanSession *s, void *mem, size_t size);
/*
 * Stop writing into the ring. A span another thread is just ending may still
 * write into it, so keep the memory mapped (profd's live client replaces it
 * with private memory rather than unmapping it).
 */
void span_session_detach_ring(SpanSession *s);
/*
 * Free; an unfinished session is abandoned: spans are
 * disabled, all counters reset and the slot released, leaving no state.
 */
SpanSession *span_session_free(SpanSession *s);
void span_session_freep(SpanSession **s);
#define _cleanup_span_session_ __attribute__((cleanup(span_session_freep)))
