/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-finish.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "export.h"
#include "profile-file.h"
#include "session-file.h"
#include "session-run.h"

/* More than a profile of MaxRingCapacity samples takes: not one the unwinder should send. */
#define UNWOUND_PROFILE_MAX ((size_t)1 << 30)

FinishJob *finish_job_free(FinishJob *j)
{
	if (!j)
		return NULL;
	safe_close(j->dir_fd);
	safe_close(j->unwound_fd);
	profile_free(j->profile);
	free(j->metrics_json);
	free(j->unit);
	json_decref(j->stack_quality);
	run_recorder_free(j->recorder);
	live_finish_free(j->live);
	session_properties_done(&j->props);
	run_profile_free(j->record);
	free(j);
	return NULL;
}

static int fill_profile(int fd, void *userdata)
{
	return profile_file_write_fd(userdata, fd);
}

static int write_record(FinishJob *j, RunState status)
{
	_cleanup_free_ char *json = NULL;
	size_t n;
	int r;

	r = run_recorder_finish(j->recorder, j->live ? live_finish_status(j->live, status) : status,
				&j->record);
	if (r >= 0 && j->live)
		r = live_finish_record(j->live, j->profile, &j->record);
	if (r >= 0)
		r = session_run_add_stack_quality(j->record, j->stack_quality);
	if (r < 0)
		return r;
	r = record_serialise(j->record, true, &json);
	if (r < 0)
		return r;
	n = strlen(json);
	json[n] = '\n'; /* the terminating NUL becomes the newline files end with */
	return write_file_atomic_deferred(j->dir_fd, export_format_to_string(EXPORT_RECORD), json,
					  n + 1);
}

/*
 * The unwinder's profile: parsed as hostile input, then held to what profd
 * knows — no more samples than it was given, no kernel frame for a caller who
 * may not see them; the window's facts are profd's own.
 */
static int take_unwound(FinishJob *j)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_profile_ Profile *p = NULL;
	size_t size;
	int r;

	if (lseek(j->unwound_fd, 0, SEEK_SET) < 0)
		return negative_errno();
	r = read_fd_full(j->unwound_fd, UNWOUND_PROFILE_MAX, &data, &size);
	if (r < 0)
		return r;
	r = profile_file_parse((const uint8_t *)data, size, &p);
	if (r < 0)
		return r;
	if (p->n_samples > j->samples_given)
		return -EBADMSG;
	for (uint32_t i = 0; !j->kernel && i < p->n_frames; i++)
		if (p->frames[i].kernel)
			return -EBADMSG;
	/* what it is of is profd's to say too: one process, or (pid 0) many */
	p->pid = j->props.pid;
	p->multi_process = j->props.pid == 0;
	p->untimed = j->untimed;
	r = profile_set_target(p, j->props.target, j->unit);
	if (r < 0)
		return r;
	p->start_unix_nanos = j->start_unix_nanos;
	p->period_nanos = j->period_nanos;
	p->duration_nanos = j->duration_nanos;
	j->profile = TAKE_PTR(p);
	return 0;
}

void finish_job_work(void *userdata)
{
	FinishJob *j = userdata;
	RunState status;
	int r = j->dir_fd < 0 ? j->dir_fd : 0;

	/* what the session does at its end is the run's reporting stage */
	run_recorder_transition(j->recorder, RUN_STATE_REPORTING);
	if (r == 0 && !j->profile && j->unwound_fd >= 0 && take_unwound(j) < 0 && !j->props.error)
		r = session_properties_set_string(&j->props.error,
						  "the unwinder returned an invalid profile");
	status = j->props.error ? RUN_STATE_FAILED : RUN_STATE_COMPLETED;
	/* a live run's stages and states go into the profile, so every export has them */
	if (r == 0 && j->profile && j->live)
		r = live_finish_join(j->live, j->profile);
	/* the names of profile, metrics and record made durable by one directory fsync (an fsync
	 * costs ~0.1 ms of CPU in a VM, a session's end writes four files) */
	if (r == 0 && j->profile)
		r = write_file_atomic_deferred_fn(j->dir_fd, SESSION_PROFILE_FILE, fill_profile,
						  j->profile);
	if (r == 0 && j->metrics_json)
		r = write_file_atomic_deferred(j->dir_fd, export_format_to_string(EXPORT_METRICS),
					       j->metrics_json, strlen(j->metrics_json));
	if (r == 0)
		r = write_record(j, status);
	if (r == 0 && fsync(j->dir_fd) < 0)
		r = negative_errno();
	if (r == 0) {
		j->props.state = status == RUN_STATE_FAILED ? SESSION_FAILED : SESSION_COMPLETED;
		r = session_properties_set_string(&j->props.run_id, j->record->identity.run_id);
		session_properties_update_duration(&j->props);
	}
	/* last: a properties file saying "completed" means every file is there */
	if (r == 0)
		r = session_file_write(j->dir_fd, &j->props);
	j->error = r;
	/* what the session's threads and this job freed would stay in their malloc arenas: a
	 * daemon living for months would keep every session's peak (bench-long-life); trimmed
	 * here, off the event loop */
	j->profile = profile_free(j->profile);
	malloc_trim(0);
}
