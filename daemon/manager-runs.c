/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The run methods of org.profd.Profiler1.Manager (manager.c's vtable):
 * every reply bounded, another user's run answered as a missing one, big
 * records parsed and read off the bus thread, changes answered once durable.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "access.h"
#include "bus-errors.h"
#include "caller-text.h"
#include "cleanup.h"
#include "manager-call.h"
#include "manager-runs.h"
#include "time-util.h"

static bool run_listed_for(const StoredRun *run, uid_t uid)
{
	return stored_run_visible(run) && access_check_owner(uid, run->owner) == 0;
}

/* Bytes one run takes in a ListRuns reply, generously: marshalling and alignment included. */
static uint64_t run_entry_bytes(const StoredRun *run)
{
	return 64 + strlen(run->run_id) + strlen(run_state_to_string(run->status)) +
	       strlen(run->source_kind) + strlen(run->workload_class);
}

/* Append the runs 'uid' may see from index 'from', up to 'count' of them and the byte cap. */
static int append_runs(sd_bus_message *reply, const Manager *m, uid_t uid, size_t from,
		       uint64_t count)
{
	uint64_t bytes = 0, n = 0;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(sssstt)");
	for (size_t i = from; r >= 0 && n < count && i < run_store_count(m->runs); i++) {
		const StoredRun *run = run_store_at(m->runs, i);

		if (!run_listed_for(run, uid))
			continue;
		bytes += run_entry_bytes(run);
		if (bytes > m->config.max_list_bytes)
			break;
		r = sd_bus_message_append(reply, "(sssstt)", run->run_id,
					  run_state_to_string(run->status), run->source_kind,
					  run->workload_class, run->wall_time_ns, run->finished_usec);
		n++;
	}
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

/* ListRuns: the newest runs the sender may see that fit in MaxListBytes, oldest first. */
int manager_method_list_runs(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	Manager *m = userdata;
	uint64_t bytes = 0;
	size_t from = run_store_count(m->runs);
	uid_t uid;
	int r;

	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	for (size_t i = run_store_count(m->runs); i > 0; i--) {
		const StoredRun *run = run_store_at(m->runs, i - 1);

		if (!run_listed_for(run, uid))
			continue;
		bytes += run_entry_bytes(run);
		if (bytes > m->config.max_list_bytes)
			break;
		from = i - 1;
	}
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = append_runs(reply, m, uid, from, UINT64_MAX);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

/* ListRunsRange(offset, count): the sender's runs from the offset-th, oldest first; and how many there are. */
int manager_method_list_runs_range(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	Manager *m = userdata;
	uint64_t offset, total = 0;
	size_t from = run_store_count(m->runs);
	uint32_t count;
	uid_t uid;
	int r;

	r = sd_bus_message_read(msg, "tu", &offset, &count);
	if (r < 0)
		return r;
	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	for (size_t i = 0; i < run_store_count(m->runs); i++)
		if (run_listed_for(run_store_at(m->runs, i), uid)) {
			if (total == offset)
				from = i;
			total++;
		}
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = append_runs(reply, m, uid, from, count == 0 ? UINT64_MAX : count);
	if (r >= 0)
		r = sd_bus_message_append(reply, "t", total);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

/* The run msg names if the sender may see it; otherwise NoSuchRun, as if it did not exist. */
static int read_visible_run(Manager *m, sd_bus_message *msg, const StoredRun **ret,
			    sd_bus_error *error)
{
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	const StoredRun *run;
	const char *id;
	uid_t uid;
	int r;

	r = sd_bus_message_read(msg, "s", &id);
	if (r < 0)
		return r;
	r = access_sender_uid(msg, &uid);
	if (r < 0)
		return r;
	run = run_store_find(m->runs, uid, id);
	if (!run)
		return sd_bus_error_setf(error, PROFD_ERROR_NO_SUCH_RUN, "no run '%s'",
					 caller_text_quote(id, quoted));
	*ret = run;
	return 0;
}

/* A zeroed job of 'size' bytes that starts with a ManagerCall for 'msg'; NULL when out of memory. */
static void *call_new(size_t size, Manager *m, sd_bus_message *msg)
{
	ManagerCall *c = calloc(1, size);

	if (c)
		manager_call_init(c, m, msg);
	return c;
}

/* Frees the job that starts with 'c'. */
static void call_free(ManagerCall *c)
{
	manager_call_release(c);
	free(c);
}

/* GetRun of a run whose record is only in its file: read on a worker, reply and keep it on the loop. */
typedef struct RunRead {
	ManagerCall call;
	uint64_t seq;
	char *json;
	size_t size;
	int error;
} RunRead;

static void run_read_work(void *userdata)
{
	RunRead *j = userdata;

	j->error = run_store_read(j->call.manager->runs, j->seq, RUN_STORE_FILE_MAX, &j->json, &j->size);
}

static void run_read_done(void *userdata)
{
	RunRead *j = userdata;

	if (j->error == -ENOENT)
		sd_bus_reply_method_errorf(j->call.message, PROFD_ERROR_NO_SUCH_RUN,
					   "the run was deleted meanwhile");
	else if (j->error < 0)
		sd_bus_reply_method_errnof(j->call.message, j->error, "cannot read the run: %s",
					   strerror(-j->error));
	else {
		sd_bus_reply_method_return(j->call.message, "s", j->json);
		run_store_keep(j->call.manager->runs, j->seq, TAKE_PTR(j->json), j->size);
	}
	free(j->json);
	call_free(&j->call);
}

int manager_method_get_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	const StoredRun *run;
	const char *json;
	RunRead *j;
	int r;

	r = read_visible_run(m, msg, &run, error);
	if (r < 0)
		return r;
	/* stored before MaxRecordBytes was lowered: the reply must stay within what the bus takes */
	if (run->json_size > m->config.max_record_bytes)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "run is %zu bytes, more than MaxRecordBytes (%" PRIu64 ")",
					 run->json_size, m->config.max_record_bytes);
	/* only now, for the run the sender may see: never another uid's, never a deleted one */
	json = run_store_json(m->runs, run);
	if (json)
		return sd_bus_reply_method_return(msg, "s", json);
	j = call_new(sizeof(*j), m, msg);
	if (!j)
		return -ENOMEM;
	j->seq = run->seq;
	r = manager_call_count(&j->call, error);
	if (r >= 0)
		r = worker_pool_submit(m->export_workers, run_read_work, run_read_done, j);
	if (r < 0) {
		call_free(&j->call);
		return r;
	}
	return 1; /* run_read_done() replies */
}

/* SubmitRun: parsed and serialised on a worker, stored on the loop, answered once durable. */
typedef struct Submit {
	ManagerCall call;
	const char *input; /* in 'message' */
	size_t input_size;
	RunProfile *record;
	char *json; /* canonical, compact */
	char *why;
	int error;
} Submit;

static Submit *submit_free(Submit *j)
{
	if (!j)
		return NULL;
	run_profile_free(j->record);
	free(j->json);
	free(j->why);
	call_free(&j->call);
	return NULL;
}

int manager_check_record(const Manager *m, const char *json, size_t len, RunProfile **ret,
			 char **ret_json, char **ret_why)
{
	_cleanup_run_profile_ RunProfile *record = NULL;
	_cleanup_free_ char *canonical = NULL;
	int r;

	r = record_parse(json, len, &record, ret_why);
	if (r == 0)
		r = record_identity_check(&record->identity, ret_why);
	if (r == 0)
		r = record_serialise(record, false, &canonical);
	if (r == 0 && strlen(canonical) > m->config.max_record_bytes &&
	    asprintf(ret_why, "record is %zu bytes as profd stores it, more than the limit of %" PRIu64
		     " (MaxRecordBytes)", strlen(canonical), m->config.max_record_bytes) >= 0)
		r = -EINVAL;
	if (r < 0)
		return r;
	*ret = TAKE_PTR(record);
	if (ret_json)
		*ret_json = TAKE_PTR(canonical);
	return 0;
}

static void submit_work(void *userdata)
{
	Submit *j = userdata;

	j->error = manager_check_record(j->call.manager, j->input, j->input_size, &j->record, &j->json,
					&j->why);
}

/* The record is on disk (or not): only now does the client hear it was stored. */
static void submit_saved(int error, void *userdata)
{
	Submit *j = userdata;
	char quoted[CALLER_TEXT_QUOTE_SIZE];

	if (error < 0)
		sd_bus_reply_method_errnof(j->call.message, error, "cannot save run '%s': %s",
					   caller_text_quote(j->record->identity.run_id, quoted),
					   strerror(-error));
	else
		sd_bus_reply_method_return(j->call.message, "s", j->record->identity.run_id);
	submit_free(j);
}

static void submit_done(void *userdata)
{
	Submit *j = userdata;
	Manager *m = j->call.manager;
	int r = j->error;

	if (r == -EINVAL || r == -E2BIG || r == -EILSEQ)
		sd_bus_reply_method_errorf(j->call.message, PROFD_ERROR_INVALID_RECORD, "%s",
					   j->why ?: "not a keyhog-profile-v1 record");
	else if (r < 0)
		sd_bus_reply_method_errnof(j->call.message, r, "cannot read the record: %s", strerror(-r));
	if (r < 0) {
		submit_free(j);
		return;
	}
	r = run_store_put_json(m->runs, j->record, TAKE_PTR(j->json), j->call.uid,
			       clock_micros(CLOCK_REALTIME), NULL, submit_saved, j);
	if (r == -EFBIG)
		sd_bus_reply_method_errorf(j->call.message, SD_BUS_ERROR_LIMITS_EXCEEDED,
					   "the record alone is larger than this user may store "
					   "(MaxRunBytesPerUser or MaxRunBytes)");
	else if (r < 0)
		sd_bus_reply_method_errnof(j->call.message, r, "cannot store the run: %s", strerror(-r));
	if (r < 0) {
		submit_free(j);
		return;
	}
	manager_update_status(m); /* submit_saved() replies */
}

int manager_method_submit_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	Submit *j;
	const char *json;
	size_t len;
	int r;

	r = sd_bus_message_read(msg, "s", &json);
	if (r < 0)
		return r;
	len = strlen(json);
	if (len > m->config.max_record_bytes)
		return sd_bus_error_setf(error, PROFD_ERROR_INVALID_RECORD,
					 "record is %zu bytes, more than the limit of %" PRIu64
					 " (MaxRecordBytes)", len, m->config.max_record_bytes);
	j = call_new(sizeof(*j), m, msg);
	if (!j)
		return -ENOMEM;
	j->input = json;
	j->input_size = len;
	r = manager_call_count(&j->call, error);
	if (r >= 0)
		/* a big record takes a while to parse: not on the loop, where it would stall everyone */
		r = worker_pool_submit(m->export_workers, submit_work, submit_done, j);
	if (r < 0) {
		submit_free(j);
		return r;
	}
	return 1; /* submit_done() or submit_saved() replies */
}

/* The removal is durable (or failed and the run is back): answer only now. */
static void delete_done(int error, void *userdata)
{
	ManagerCall *c = userdata;

	if (error < 0)
		sd_bus_reply_method_errnof(c->message, error, "cannot delete the run: %s",
					   strerror(-error));
	else
		sd_bus_reply_method_return(c->message, NULL);
	manager_update_status(c->manager);
	call_free(c);
}

int manager_method_delete_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	const StoredRun *run;
	ManagerCall *c;
	int r;

	r = read_visible_run(m, msg, &run, error);
	if (r < 0)
		return r;
	c = call_new(sizeof(*c), m, msg);
	if (!c)
		return -ENOMEM;
	r = run_store_delete(m->runs, run, delete_done, c);
	if (r < 0) {
		call_free(c);
		return r;
	}
	return 1; /* delete_done() replies */
}
