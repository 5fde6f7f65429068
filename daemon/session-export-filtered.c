/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ExportFilteredToFd: a profile format of only the samples of one stage or
 * macro state of a live run (their "stage" and "state" labels). Made from the
 * session's profile file on an export thread every time it is asked for (a
 * selection is not kept), into a memfd that export-stream.c then serves like
 * any export file.
 */
#include "session-export-filtered.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "atomic-file.h"
#include "bus-errors.h"
#include "caller-text.h"
#include "cleanup.h"
#include "export-stream.h"
#include "export.h"
#include "manager-call.h"
#include "profile-file.h"
#include "record.h"
#include "session-finish.h"

/* A profile file larger than this is not one profd wrote (as session-export.c). */
#define PROFILE_FILE_MAX ((size_t)1 << 30)

typedef struct FilterJob {
	ManagerCall call; /* counted as a request while making; serving counts its own */
	int dir_fd;
	int out;       /* the caller's descriptor */
	int made;      /* memfd with the export */
	ExportFormat format;
	const char *keys[2], *values[2]; /* static names (stage and state vocabularies) */
	size_t n_filters;
	char session_id[SESSION_ID_LENGTH + 1];
	int error;
} FilterJob;

static FilterJob *filter_job_free(FilterJob *j)
{
	if (!j)
		return NULL;
	manager_call_release(&j->call);
	safe_close(j->dir_fd);
	safe_close(j->out);
	safe_close(j->made);
	free(j);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(FilterJob *, filter_job_free);

static void filter_job_work(void *userdata)
{
	FilterJob *j = userdata;
	_cleanup_free_ char *data = NULL;
	_cleanup_profile_ Profile *p = NULL;
	_cleanup_close_ int fd = -1;
	size_t size;
	int r;

	r = read_file_at(j->dir_fd, SESSION_PROFILE_FILE, PROFILE_FILE_MAX, &data, &size);
	if (r >= 0)
		r = profile_file_parse((const uint8_t *)data, size, &p);
	for (size_t i = 0; r >= 0 && i < j->n_filters; i++) {
		r = profile_keep_labelled(p, j->keys[i], j->values[i]);
		if (r == -ENOENT)
			r = -ENOMSG; /* no such label: not a live run's profile */
	}
	if (r >= 0)
		r = fd = memfd_create("profd-export", MFD_CLOEXEC);
	if (r >= 0)
		r = export_profile_to_fd(p, j->format, fd);
	if (r >= 0 && lseek(fd, 0, SEEK_SET) < 0)
		r = negative_errno();
	if (r >= 0)
		j->made = TAKE_FD(fd);
	j->error = r < 0 ? r : 0;
}

static void filter_job_done(void *userdata)
{
	_cleanup_(filter_job_freep) FilterJob *j = userdata;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	Manager *m = j->call.manager;
	int r = j->error;

	/* serving it counts as the request making it did */
	manager_call_end_request(&j->call);
	if (r == -ENOMSG)
		sd_bus_error_setf(&error, SD_BUS_ERROR_INVALID_ARGS,
				  "session %s is not a live run: its samples have no stages or states",
				  j->session_id);
	else if (r == -ENOENT)
		sd_bus_error_setf(&error, PROFD_ERROR_NOT_READY,
				  "session %s has no profile to export", j->session_id);
	else if (r == -EBADMSG)
		sd_bus_error_setf(&error, SD_BUS_ERROR_IO_ERROR,
				  "the profile of session %s is damaged; it cannot be exported",
				  j->session_id);
	else if (r < 0)
		sd_bus_error_set_errnof(&error, r, "cannot make the %s export: %s",
					export_format_to_string(j->format), strerror(-r));
	else
		r = export_server_reply(m->exports, j->call.message, TAKE_FD(j->made),
					TAKE_FD(j->out), m->config.max_export_bytes, &error);
	if (r < 0)
		(void)sd_bus_reply_method_error(j->call.message, &error);
}

/* One filter of the a{sv}: "stage" or "state", a name from its fixed vocabulary; 0 for other keys. */
static int filter_option(sd_bus_message *msg, const char *key, void *userdata, sd_bus_error *error)
{
	FilterJob *j = userdata;
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	bool stage = strcmp(key, "stage") == 0;
	const char *value, *name = NULL;
	int v, r;

	if (!stage && strcmp(key, "state") != 0)
		return 0;
	r = manager_read_option(msg, key, 's', &value, error);
	if (r < 0)
		return r;
	v = stage ? stage_from_string(value) : run_state_from_string(value);
	if (v >= 0)
		name = stage ? stage_to_string(v) : run_state_to_string(v);
	if (!name)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "unknown %s '%s'", key,
					 caller_text_quote(value, quoted));
	for (size_t i = 0; i < j->n_filters; i++)
		if (strcmp(j->keys[i], key) == 0)
			return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
						 "filter '%s' given twice", key);
	j->keys[j->n_filters] = stage ? "stage" : "state";
	j->values[j->n_filters++] = name;
	return 1;
}

/* a{sv} of "stage" and "state" names into the job. */
static int parse_filter(sd_bus_message *msg, FilterJob *j, sd_bus_error *error)
{
	int r = manager_parse_options(msg, filter_option, j, "stage, state", error);

	if (r < 0)
		return r;
	if (j->n_filters == 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "no filter given (stage, state)");
	return 0;
}

int session_method_export_filtered(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(filter_job_freep) FilterJob *j = calloc(1, sizeof(*j));
	char quoted[CALLER_TEXT_QUOTE_SIZE];
	Session *s = userdata;
	Manager *m = s->manager;
	const char *format;
	int fd, r;

	if (!j)
		return -ENOMEM;
	j->dir_fd = j->out = j->made = -1;
	manager_call_init(&j->call, m, msg);
	/* parse, validate */
	r = sd_bus_message_read(msg, "s", &format);
	if (r < 0)
		return r;
	if (export_format_from_string(format, &j->format) < 0 || !export_format_is_profile(j->format))
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "'%s' is not a profile format (folded, pprof, firefox, "
					 "speedscope, svg)", caller_text_quote(format, quoted));
	r = parse_filter(msg, j, error);
	if (r < 0)
		return r;
	r = sd_bus_message_read(msg, "h", &fd);
	if (r < 0)
		return r;
	if (session_is_busy(s))
		return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY,
					 "session %s is still %s; wait for its Finished signal", s->id,
					 session_state_to_string(s->state));
	j->out = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (j->out < 0)
		return -errno;
	j->dir_fd = session_open_dir(s);
	if (j->dir_fd < 0)
		return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY,
					 "session %s has no profile (its files are gone)", s->id);
	memcpy(j->session_id, s->id, sizeof(j->session_id));
	/* act: making one counts as a request of the caller's, like serving it */
	r = manager_call_count(&j->call, error);
	if (r < 0)
		return r;
	r = worker_pool_submit(m->export_workers, filter_job_work, filter_job_done, j);
	if (r < 0)
		return r;
	TAKE_PTR(j);
	return 1;
}
