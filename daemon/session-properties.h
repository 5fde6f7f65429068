/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a session says about itself: one table of properties, from which the
 * Session object's D-Bus properties (session-bus.c) and the "session" file
 * in its directory (session-file.c) are both made, so the two never differ.
 * Plain data, no behaviour: a finishing worker gets its own copy.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum SessionState {
	SESSION_SAMPLING,
	SESSION_RESOLVING,
	SESSION_COMPLETED,
	SESSION_FAILED,
	_SESSION_STATE_MAX,
} SessionState;

const char *session_state_to_string(SessionState s);
int session_state_from_string(const char *s);

#define SESSION_ID_LENGTH 16

/*
 * The fields; a Session holds them both by name and as 'props' (see
 * SESSION_PROPERTY_GROUP), so the rest of profd writes s->owner.
 */
#define SESSION_PROPERTY_FIELDS                                                                    \
	char id[SESSION_ID_LENGTH + 1];                                                            \
	uid_t owner;                                                                               \
	pid_t pid;         /* 0 for a cgroup, unit or the whole machine */                        \
	char *target;      /* "pid:N", "cgroup:PATH", "unit:NAME", "system" */                    \
	SessionState state;                                                                        \
	uint64_t created_usec; /* CLOCK_REALTIME */                                                \
	char *backend, *event;                                                                     \
	uint32_t requested_hz, hz;                                                                 \
	uint64_t requested_duration_usec;                                                          \
	uint64_t effective_duration_nanos; /* the window planned, after clamping */                \
	uint64_t duration_nanos;           /* the window covered */                                \
	uint64_t duration_usec;            /* on the bus: planned while sampling, covered after */ \
	bool clamped, buffer_full;                                                                 \
	uint64_t samples_captured, samples_dropped;                                                \
	uint32_t threads_seen, threads_at_start;                                                   \
	char *run_id;                                                                              \
	char *error;

typedef struct SessionProperties {
	SESSION_PROPERTY_FIELDS
} SessionProperties;

/* The fields by name and, overlaid, as one SessionProperties (as the kernel's struct_group()). */
#define SESSION_PROPERTY_GROUP                     \
	union {                                    \
		struct {                           \
			SESSION_PROPERTY_FIELDS    \
		};                                 \
		SessionProperties props;           \
	}

/* How a field is read, written and shown. */
typedef enum SessionFieldKind {
	SESSION_FIELD_ID,     /* char[SESSION_ID_LENGTH + 1] */
	SESSION_FIELD_U32,    /* uint32_t (uid_t, pid_t) */
	SESSION_FIELD_U64,
	SESSION_FIELD_BOOL,
	SESSION_FIELD_STRING, /* char *, NULL shown as "" */
	SESSION_FIELD_STATE,  /* SessionState, by name */
} SessionFieldKind;

/*
 * The table. BOTH(bus name, file key, kind, field, bus flags); FILE_ONLY(file key, kind,
 * field); BUS_ONLY(bus name, kind, field, bus flags). Bus flags: CONST (fixed once
 * sampling started), CHANGE (announced with PropertiesChanged), LIVE (moves with every
 * sample: read it, nobody is told). Order: the file's line order and the bus's.
 */
#define SESSION_PROPERTY_TABLE(BOTH, FILE_ONLY, BUS_ONLY)                                             \
	BOTH("Id", "id", ID, id, CONST)                                                               \
	FILE_ONLY("owner", U32, owner)                                                                \
	BOTH("Pid", "pid", U32, pid, CONST)                                                           \
	BOTH("Target", "target", STRING, target, CONST)                                               \
	BOTH("State", "state", STATE, state, CHANGE)                                                  \
	FILE_ONLY("created_usec", U64, created_usec)                                                  \
	BOTH("Backend", "backend", STRING, backend, CONST)                                            \
	BOTH("Event", "event", STRING, event, CONST)                                                  \
	BOTH("RequestedHz", "requested_hz", U32, requested_hz, CONST)                                 \
	BOTH("Hz", "hz", U32, hz, CONST)                                                              \
	BOTH("RequestedDurationUSec", "requested_duration_usec", U64, requested_duration_usec, CONST) \
	FILE_ONLY("effective_duration_nanos", U64, effective_duration_nanos)                          \
	FILE_ONLY("duration_nanos", U64, duration_nanos)                                              \
	BUS_ONLY("DurationUSec", U64, duration_usec, CHANGE)                                          \
	BOTH("Clamped", "clamped", BOOL, clamped, CONST)                                              \
	BOTH("SamplesCaptured", "samples_captured", U64, samples_captured, LIVE)                      \
	BOTH("SamplesDropped", "samples_dropped", U64, samples_dropped, LIVE)                         \
	BOTH("ThreadsSeen", "threads_seen", U32, threads_seen, LIVE)                                  \
	BOTH("ThreadsAtStart", "threads_at_start", U32, threads_at_start, CONST)                      \
	BOTH("BufferFull", "buffer_full", BOOL, buffer_full, CHANGE)                                  \
	BOTH("RunId", "run_id", STRING, run_id, CHANGE)                                               \
	BOTH("Error", "error", STRING, error, CHANGE)

void session_properties_done(SessionProperties *p);
/* A deep copy (the strings too). */
int session_properties_copy(const SessionProperties *p, SessionProperties *ret);
/* Replace a string field with a copy of 's' (NULL or "" clears it). */
int session_properties_set_string(char **field, const char *s);
/* DurationUSec from the rest: the planned window while sampling, the covered one after. */
void session_properties_update_duration(SessionProperties *p);
