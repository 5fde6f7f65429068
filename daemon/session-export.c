/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "bus-errors.h"
#include "cleanup.h"
#include "export-stream.h"
#include "log.h"
#include "session-export.h"

typedef struct ProfileExport {
	const Profile *profile;
	ExportFormat format;
} ProfileExport;

static int fill_export(int fd, void *userdata)
{
	const ProfileExport *e = userdata;

	return export_profile_to_fd(e->profile, e->format, fd);
}

static int write_record(Session *s)
{
	_cleanup_free_ char *json = NULL;
	size_t n;
	int r;

	run_recorder_transition(s->recorder, RUN_STATE_REPORTING);
	r = run_recorder_finish(s->recorder, s->error ? RUN_STATE_FAILED : RUN_STATE_COMPLETED,
				&s->record);
	if (r < 0)
		return r;
	r = record_serialise(s->record, true, &json);
	if (r < 0)
		return r;
	n = strlen(json);
	json[n] = '\n'; /* the terminating NUL becomes the newline files end with */
	return write_file_atomic(s->dir, export_format_to_string(EXPORT_RECORD), json, n + 1);
}

void session_write_exports(void *userdata)
{
	Session *s = userdata;
	int r = 0;

	if (s->profile)
		for (ExportFormat f = 0; f < _EXPORT_FORMAT_MAX && r == 0; f++) {
			ProfileExport e = { s->profile, f };

			if (export_format_is_profile(f))
				r = write_file_atomic_fn(s->dir, export_format_to_string(f), fill_export,
							 &e);
		}
	if (r == 0 && s->metrics_json)
		r = write_file_atomic(s->dir, export_format_to_string(EXPORT_METRICS), s->metrics_json,
				      strlen(s->metrics_json));
	if (r == 0)
		r = write_record(s);
	/* last: a properties file saying "completed" means every export is there */
	if (r == 0)
		r = session_save_as(s, s->error ? SESSION_FAILED : SESSION_COMPLETED,
				    s->record->identity.run_id);
	s->resolve_error = r;
}

static void unlink_in(const char *dir, const char *name)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/%s", dir, name) >= 0)
		unlink(path);
}

void session_remove_files(Session *s)
{
	/* the properties first: a crash half way leaves no session that looks complete */
	unlink_in(s->dir, SESSION_FILE);
	for (ExportFormat f = 0; f < _EXPORT_FORMAT_MAX; f++)
		unlink_in(s->dir, export_format_to_string(f));
	if (rmdir(s->dir) < 0 && errno != ENOENT)
		log_warning("cannot remove '%s': %s", s->dir, strerror(errno));
}

typedef struct ExportJob {
	sd_bus_message *message;
	char *path;
	int fd;        /* ExportToFd's file or device, or -1 for Export */
	uint64_t max;  /* Export's size limit */
	char *data;
	size_t size;
	int error;
} ExportJob;

static ExportJob *export_job_free(ExportJob *j)
{
	if (!j)
		return NULL;
	sd_bus_message_unref(j->message);
	free(j->path);
	safe_close(j->fd);
	free(j->data);
	free(j);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(ExportJob *, export_job_free);

static int copy_file_to_fd(const char *path, int out)
{
	_cleanup_close_ int in = open(path, O_RDONLY | O_CLOEXEC);
	char buf[64 * 1024];

	if (in < 0)
		return negative_errno();
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (n == 0)
			return 0;
		r = write_all(out, buf, (size_t)n);
		if (r < 0)
			return r;
	}
}

static void export_job_work(void *userdata)
{
	ExportJob *j = userdata;

	if (j->fd >= 0)
		j->error = copy_file_to_fd(j->path, j->fd);
	else
		j->error = read_file_full(j->path, j->max, &j->data, &j->size);
}

static void export_job_done(void *userdata)
{
	_cleanup_(export_job_freep) ExportJob *j = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	if (j->error == -EFBIG) {
		sd_bus_reply_method_errorf(j->message, SD_BUS_ERROR_LIMITS_EXCEEDED,
					   "the export is larger than %llu bytes; use ExportToFd",
					   (unsigned long long)j->max);
		return;
	}
	if (j->error < 0) {
		sd_bus_reply_method_errnof(j->message, j->error, "cannot export: %s",
					   strerror(-j->error));
		return;
	}
	/* close our copy first so a reader of a pipe sees EOF no later than the reply */
	j->fd = safe_close(j->fd);
	r = sd_bus_message_new_method_return(j->message, &reply);
	if (r >= 0 && j->data)
		r = sd_bus_message_append_array(reply, 'y', j->data, j->size);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	if (r < 0)
		log_warning("cannot send an export reply: %s", strerror(-r));
}

int session_export_reply(Session *s, sd_bus_message *m, ExportFormat format, int fd,
			 sd_bus_error *error)
{
	_cleanup_(export_job_freep) ExportJob *j = NULL;
	_cleanup_close_ int fd_copy = fd;
	struct stat st;
	int in, r;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fd = TAKE_FD(fd_copy);
	j->max = s->manager->config.max_export_bytes;
	if (asprintf(&j->path, "%s/%s", s->dir, export_format_to_string(format)) < 0)
		return -ENOMEM;
	if (access(j->path, R_OK) < 0)
		return sd_bus_error_setf(error, PROFD_ERROR_NOT_READY,
					 "session %s has no %s export%s%s", s->id,
					 export_format_to_string(format),
					 s->error ? ": " : " (its files are gone)", s->error ?: "");
	if (j->fd >= 0 && fstat(j->fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		/* a reader on the other end sets the pace: copy from the loop as it reads */
		in = open(j->path, O_RDONLY | O_CLOEXEC);
		if (in < 0)
			return negative_errno();
		r = export_stream_start(s->manager->event, m, in, TAKE_FD(j->fd));
		return r < 0 ? r : 1;
	}
	/* files and devices, and Export's read, take bounded time: a worker does them */
	j->message = sd_bus_message_ref(m);
	r = worker_pool_submit(s->manager->export_workers, export_job_work, export_job_done, j);
	if (r < 0)
		return r;
	TAKE_PTR(j);
	return 1;
}
