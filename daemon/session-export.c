/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "atomic-file.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "export-stream.h"
#include "log.h"
#include "manager-call.h"
#include "profile-file.h"
#include "session-finish.h"

/* A profile file larger than this is not one profd wrote (4M samples are 64 MiB). */
#define PROFILE_FILE_MAX ((size_t)1 << 30)

typedef struct ProfileExport {
	const Profile *profile;
	ExportFormat format;
} ProfileExport;

static int fill_export(int fd, void *userdata)
{
	const ProfileExport *e = userdata;

	return export_profile_to_fd(e->profile, e->format, fd);
}

/* Make the export file of 'format' from the session's profile file (read as untrusted). */
static int make_export(int dir_fd, ExportFormat format)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_profile_ Profile *p = NULL;
	ProfileExport e;
	size_t size;
	int r;

	r = read_file_at(dir_fd, SESSION_PROFILE_FILE, PROFILE_FILE_MAX, &data, &size);
	if (r < 0)
		return r;
	r = profile_file_parse((const uint8_t *)data, size, &p);
	if (r < 0)
		return r;
	e = (ProfileExport){ p, format };
	return write_file_atomic_fn(dir_fd, export_format_to_string(format), fill_export, &e);
}

/* The first request for a profile format: made on an export thread, then served. */
typedef struct MakeJob {
	ManagerCall call; /* counted as a request while making; serving counts its own */
	int dir_fd;
	int out;
	ExportFormat format;
	char *session_id;
	int error;      /* of making it */
} MakeJob;

static MakeJob *make_job_free(MakeJob *j)
{
	if (!j)
		return NULL;
	manager_call_release(&j->call);
	safe_close(j->dir_fd);
	safe_close(j->out);
	free(j->session_id);
	free(j);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(MakeJob *, make_job_free);

static void make_job_work(void *userdata)
{
	MakeJob *j = userdata;
	int in;

	/*
	 * Requests for the same session wait for each other (the lock is the
	 * directory's); the one that waited finds the file made.
	 */
	if (flock(j->dir_fd, LOCK_EX) < 0) {
		j->error = negative_errno();
		return;
	}
	in = open_regular_at(j->dir_fd, export_format_to_string(j->format));
	j->error = in >= 0 ? 0 : in == -ENOENT ? make_export(j->dir_fd, j->format) : in;
	safe_close(in);
	(void)flock(j->dir_fd, LOCK_UN);
}

static void make_job_done(void *userdata)
{
	_cleanup_(make_job_freep) MakeJob *j = userdata;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *msg = j->call.message;
	Manager *m = j->call.manager;
	int r = j->error;

	manager_call_end_request(&j->call);
	if (r == 0)
		r = open_regular_at(j->dir_fd, export_format_to_string(j->format));
	if (r >= 0)
		r = export_server_reply(m->exports, msg, r, TAKE_FD(j->out), m->config.max_export_bytes,
					&error);
	if (r >= 0)
		return;
	if (sd_bus_error_is_set(&error))
		(void)sd_bus_reply_method_error(msg, &error);
	else if (r == -EBADMSG)
		(void)sd_bus_reply_method_errorf(msg, SD_BUS_ERROR_IO_ERROR,
						 "the profile of session %s is damaged; it cannot be "
						 "exported", j->session_id);
	else
		(void)sd_bus_reply_method_errnof(msg, r, "cannot make the %s export: %s",
						 export_format_to_string(j->format), strerror(-r));
}

static int make_then_serve(Manager *m, sd_bus_message *msg, const ExportRequest *req, int dir_fd,
			   int out, sd_bus_error *error)
{
	_cleanup_(make_job_freep) MakeJob *j = calloc(1, sizeof(*j));
	int r;

	if (!j) {
		safe_close(dir_fd);
		safe_close(out);
		return -ENOMEM;
	}
	j->dir_fd = dir_fd;
	j->out = out;
	manager_call_init(&j->call, m, msg);
	j->format = req->format;
	j->session_id = strdup(req->session_id);
	if (!j->session_id)
		return -ENOMEM;
	/* making one counts as a request of the caller's, like serving it */
	r = manager_call_count(&j->call, error);
	if (r < 0)
		return r;
	r = worker_pool_submit(m->export_workers, make_job_work, make_job_done, j);
	if (r < 0)
		return r;
	TAKE_PTR(j);
	return 1;
}

int session_export_reply(Manager *m, sd_bus_message *msg, const ExportRequest *req,
			 sd_bus_error *error)
{
	_cleanup_close_ int dir_fd = req->dir_fd, out = req->out_fd;
	int in = dir_fd < 0 ? dir_fd : open_regular_at(dir_fd, export_format_to_string(req->format));

	if (in >= 0)
		return export_server_reply(m->exports, msg, in, TAKE_FD(out),
					   m->config.max_export_bytes, error);
	if (in == -ENOENT && export_format_is_profile(req->format) &&
	    faccessat(dir_fd, SESSION_PROFILE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return make_then_serve(m, msg, req, TAKE_FD(dir_fd), TAKE_FD(out), error);
	return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY, "session %s has no %s export%s%s",
				 req->session_id, export_format_to_string(req->format),
				 req->session_error ? ": " : " (its files are gone)",
				 req->session_error ?: "");
}
