/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Live runs with profd, for programs instrumented with stage spans
 * (<profd/span.h>, SpanSession in <profd/record.h>): profd samples the
 * program while it runs, and every span's interval (thread, stage, begin,
 * end) and every macro-state transition reaches profd through shared memory
 * profd hands over (no call per span), so the stored record says, per stage
 * and per state, how much CPU the stage took and which functions were hot.
 *
 *	SpanSession *session;
 *	ProfdLiveRun *live;
 *
 *	span_session_start(&identity, &session);
 *	profd_live_begin(session, NULL, &live);  // live when $PROFD_LIVE is set
 *	...  SPAN_SCOPE(STAGE_DECODE); span_session_transition(session, RUN_STATE_SCANNING); ...
 *	span_session_finish(session, RUN_STATE_COMPLETED, &record);
 *	profd_live_finish(live, record);         // profd stores it with the samples
 *	profd_live_free(live);
 *	span_session_free(session);
 *
 * `profctl record --stages -- PROGRAM` sets PROFD_LIVE. Without it, or when
 * profd cannot be reached, the span session works exactly as without this
 * library: spans are counted in the process, nothing fails.
 *
 * Build with `pkg-config --cflags --libs profd-live`.
 */

#include <stdbool.h>
#include <stdint.h>

#include "record.h"
#include "span.h"

/* The bus to find profd on: "system", "user", or a D-Bus address (unix:path=...). */
#define PROFD_LIVE_ENV "PROFD_LIVE"
/* The rate (samples per second per thread) and longest duration (microseconds) of the run, when the options give none. */
#define PROFD_LIVE_HZ_ENV "PROFD_LIVE_HZ"
#define PROFD_LIVE_DURATION_ENV "PROFD_LIVE_DURATION_USEC"

typedef struct ProfdLiveOptions {
	const char *bus;        /* as PROFD_LIVE says; NULL: $PROFD_LIVE, no live run when unset */
	uint32_t hz;            /* samples per second per thread; 0: $PROFD_LIVE_HZ, else profd's default for runs */
	uint64_t duration_usec; /* longest the run may last; 0: $PROFD_LIVE_DURATION_USEC, else profd's ceiling (1 h by default) */
	uint32_t threads;       /* threads that will end spans; 0: profd's default (128) */
	bool required;          /* fail when the run cannot be live, instead of going on without */
} ProfdLiveOptions;

typedef struct ProfdLiveRun ProfdLiveRun;

/*
 * Make span session 's' a live run when asked (o->bus or $PROFD_LIVE): ask
 * profd to sample this process (BeginRun) and write the session's spans and
 * transitions into the ring it hands over. Returns 0 with *ret set whether or
 * not the run is live (profd_live_status() says why not); a negative errno
 * only when o->required and it could not be, or for lack of memory.
 */
int profd_live_begin(SpanSession *s, const ProfdLiveOptions *o, ProfdLiveRun **ret);
bool profd_live_is_live(const ProfdLiveRun *r);
/* Why the run is not live, or NULL when it is. */
const char *profd_live_status(const ProfdLiveRun *r);
/* profd's run id (the session's own), NULL when not live. */
const char *profd_live_run_id(const ProfdLiveRun *r);

/*
 * Hand the session's record (from span_session_finish()) to profd, which ends
 * sampling, joins the samples with the spans and stores the record; returns
 * once it is stored. 0 at once when the run is not live. When the run ended
 * first (its deadline passed, or profd restarted meanwhile) profd stored what
 * it sampled as a failed run, and this record replaces it with those samples'
 * shares added (0). -ESTALE while that failed run is still being stored (try
 * again). When profd knows nothing of the run the record is stored without
 * samples (SubmitRun) and -ENOENT returned.
 */
int profd_live_finish(ProfdLiveRun *r, const RunProfile *record);

/*
 * Free. The shared memory stays mapped, replaced by private memory: a span
 * another thread is just ending may still write into it.
 */
ProfdLiveRun *profd_live_free(ProfdLiveRun *r);
