/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "live-finish.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "cleanup.h"
#include "log.h"

LiveFinish *live_finish_free(LiveFinish *f)
{
	if (!f)
		return NULL;
	manager_call_fail(&f->reply_to, SD_BUS_ERROR_FAILED,
			  "the live run could not be finished; see profd's log");
	span_log_free(f->log);
	run_profile_free(f->program_record);
	free(f->session_id);
	free(f->comm);
	free(f->build_id);
	free(f->end_reason);
	free(f);
	return NULL;
}

int live_finish_join(LiveFinish *f, Profile *p)
{
	int r;

	r = stage_join(p, f->log, f->start_mono, &f->join);
	if (r < 0)
		return r;
	f->joined = true;
	return 0;
}

RunState live_finish_status(const LiveFinish *f, RunState session_status)
{
	/* a program that never sent its record did not finish its run: it crashed, hung or forgot */
	return f->program_record ? session_status : RUN_STATE_FAILED;
}

int live_finish_record(LiveFinish *f, const Profile *p, RunProfile **record)
{
	_cleanup_run_profile_ RunProfile *observed = NULL;
	StageJoin empty = { .n_states = f->log->n_transitions };
	int r;

	/* without a profile (sampling failed early) the counts are all zero */
	if (!f->joined)
		f->join = empty;
	if (!f->program_record) {
		r = live_record_add_span_stages(*record, f->log);
		if (r < 0)
			return r;
		return live_record_annotate(*record, NULL, &f->join, p, f->log, &f->facts);
	}
	/* the program's record wins for what it measured; profd's own becomes its "observed" */
	r = live_record_annotate(f->program_record, *record, &f->join, p, f->log, &f->facts);
	if (r < 0)
		return r;
	observed = *record;
	*record = TAKE_PTR(f->program_record);
	return 0;
}

void live_finish_answer(ManagerCall *c, int error)
{
	if (error < 0)
		(void)sd_bus_reply_method_errnof(c->message, error, "cannot save the run: %s",
						 strerror(-error));
	else
		(void)sd_bus_reply_method_return(c->message, NULL);
	manager_call_release(c);
}

/* FinishRun's answer (a heap ManagerCall), once the record is durable. */
static void finish_reply_saved(int error, void *userdata)
{
	ManagerCall *c = userdata;

	live_finish_answer(c, error);
	free(c);
}

static void run_saved(int error, void *userdata)
{
	if (error < 0)
		log_error("cannot save the record of a live run: %s", strerror(-error));
}

int live_finish_store(LiveFinish *f, RunStore *runs, const RunProfile *record, uid_t owner,
		      uint64_t finished_usec, const StoredRun **ret)
{
	ManagerCall *fr = NULL;
	int r;

	if (f->reply_to.message) {
		fr = malloc(sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		*fr = f->reply_to;
	}
	r = run_store_put(runs, record, owner, finished_usec, ret, fr ? finish_reply_saved : run_saved,
			  fr);
	if (r < 0) {
		free(fr);
		return r; /* f still holds the call: freeing f answers it */
	}
	f->reply_to = (ManagerCall){}; /* finish_reply_saved() answers */
	return 0;
}
