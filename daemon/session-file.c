/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A session's properties on disk: "key=value" lines in <dir>/session,
 * rewritten atomically at start and when the session finishes.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "export.h"
#include "log.h"
#include "session-export.h"
#include "session.h"

#define SESSION_FILE_MAX (64 * 1024)

int session_save_as(Session *s, SessionState state, const char *run_id)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	const SamplingMetrics *mt = &s->metrics;

	{
		_cleanup_fclose_ FILE *f = open_memstream(&buf, &size);

		if (!f)
			return -ENOMEM;
		fprintf(f,
			"id=%s\nowner=%u\npid=%d\nstate=%s\ncreated_usec=%" PRIu64 "\n"
			"requested_hz=%" PRIu32 "\nrequested_duration_usec=%" PRIu64 "\n"
			"hz=%" PRIu32 "\neffective_duration_nanos=%" PRIu64 "\n"
			"duration_nanos=%" PRIu64 "\nclamped=%d\nbuffer_full=%d\n"
			"samples_captured=%" PRIu64 "\nsamples_dropped=%" PRIu64 "\n"
			"threads_seen=%" PRIu64 "\nthreads_at_start=%" PRIu64 "\n"
			"backend=%s\nevent=%s\nrun_id=%s\n",
			s->id, (unsigned)s->owner, (int)s->pid, session_state_to_string(state),
			s->created_usec, s->requested_hz, s->requested_duration_usec, mt->hz,
			mt->effective_duration_nanos, mt->duration_nanos, mt->clamped,
			mt->buffer_full, mt->samples_captured, mt->samples_dropped,
			mt->threads_seen, mt->threads_at_start, s->backend ?: "", s->event ?: "",
			run_id ?: "");
		fputs("error=", f);
		for (const char *p = s->error ?: ""; *p; p++)
			fputc(*p == '\n' ? ' ' : *p, f);
		fputc('\n', f);
		if (fflush(f) != 0)
			return -ENOMEM;
	}
	return write_file_atomic(s->dir, SESSION_FILE, buf, size);
}

int session_save(Session *s)
{
	return session_save_as(s, s->state, s->run_id);
}

static int parse_u64(const char *v, uint64_t *ret)
{
	char *end;
	unsigned long long x;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = x;
	return 0;
}

static int replace_string(char **field, const char *v)
{
	char *c = *v ? strdup(v) : NULL;

	if (*v && !c)
		return -ENOMEM;
	free(*field);
	*field = c;
	return 0;
}

static int session_set_key(Session *s, const char *key, const char *v, bool *have_id)
{
	static const struct {
		const char *key;
		size_t offset;
		int width; /* bytes: 4 or 8; 1 for a bool */
	} numbers[] = {
		{ "owner", offsetof(Session, owner), 4 },
		{ "pid", offsetof(Session, pid), 4 },
		{ "created_usec", offsetof(Session, created_usec), 8 },
		{ "requested_hz", offsetof(Session, requested_hz), 4 },
		{ "requested_duration_usec", offsetof(Session, requested_duration_usec), 8 },
		{ "hz", offsetof(Session, metrics.hz), 4 },
		{ "effective_duration_nanos", offsetof(Session, metrics.effective_duration_nanos), 8 },
		{ "duration_nanos", offsetof(Session, metrics.duration_nanos), 8 },
		{ "clamped", offsetof(Session, metrics.clamped), 1 },
		{ "buffer_full", offsetof(Session, metrics.buffer_full), 1 },
		{ "samples_captured", offsetof(Session, metrics.samples_captured), 8 },
		{ "samples_dropped", offsetof(Session, metrics.samples_dropped), 8 },
		{ "threads_seen", offsetof(Session, metrics.threads_seen), 8 },
		{ "threads_at_start", offsetof(Session, metrics.threads_at_start), 8 },
	};
	uint64_t x;
	int r;

	if (strcmp(key, "id") == 0) {
		*have_id = strcmp(v, s->id) == 0;
		return *have_id ? 0 : -EINVAL;
	}
	if (strcmp(key, "state") == 0) {
		r = session_state_from_string(v);
		if (r < 0)
			return r;
		s->state = r;
		return 0;
	}
	if (strcmp(key, "backend") == 0)
		return replace_string(&s->backend, v);
	if (strcmp(key, "event") == 0)
		return replace_string(&s->event, v);
	if (strcmp(key, "run_id") == 0)
		return replace_string(&s->run_id, v);
	if (strcmp(key, "error") == 0)
		return replace_string(&s->error, v);
	for (size_t i = 0; i < ELEMENTSOF(numbers); i++) {
		char *p = (char *)s + numbers[i].offset;

		if (strcmp(key, numbers[i].key) != 0)
			continue;
		r = parse_u64(v, &x);
		if (r < 0)
			return r;
		if (numbers[i].width == 1)
			*(bool *)p = x != 0;
		else if (numbers[i].width == 4)
			*(uint32_t *)p = (uint32_t)x;
		else
			*(uint64_t *)p = x;
		return 0;
	}
	return 0; /* a key of a newer profd: keep going */
}

static int session_load_one(Manager *m, const char *id, Session **ret, const char **ret_reason)
{
	_cleanup_(session_freep) Session *s = calloc(1, sizeof(*s));
	_cleanup_free_ char *data = NULL, *path = NULL, *metrics = NULL;
	size_t size;
	bool have_id = false;
	char *line, *next;
	int r;

	if (!s)
		return -ENOMEM;
	s->manager = m;
	s->pidfd = -1;
	snprintf(s->id, sizeof(s->id), "%.16s", id);
	if (asprintf(&s->path, PROFD_SESSION_PREFIX "/%s", s->id) < 0 ||
	    asprintf(&s->dir, "%s/%s", m->sessions_dir, s->id) < 0 ||
	    asprintf(&path, "%s/" SESSION_FILE, s->dir) < 0)
		return -ENOMEM;
	r = read_file_full(path, SESSION_FILE_MAX, &data, &size);
	if (r < 0) {
		*ret_reason = "properties file missing or unreadable";
		return r;
	}
	for (line = data; line && *line; line = next) {
		char *eq;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		eq = strchr(line, '=');
		if (!eq) {
			*ret_reason = "malformed line";
			return -EBADMSG;
		}
		*eq = '\0';
		r = session_set_key(s, line, eq + 1, &have_id);
		if (r < 0) {
			*ret_reason = "bad value";
			return r;
		}
	}
	if (!have_id) {
		*ret_reason = "id missing or not the directory's";
		return -EBADMSG;
	}
	s->metrics.backend = s->backend;
	s->metrics.event = s->event;
	if (session_is_busy(s)) {
		/* the daemon died while this session ran: its profile is lost */
		s->state = SESSION_FAILED;
		if (replace_string(&s->error, "interrupted: profd stopped before the session finished") < 0)
			return -ENOMEM;
		r = session_save(s);
		if (r < 0)
			log_warning("cannot update '%s': %s", path, strerror(-r));
	}
	free(path);
	path = NULL;
	if (asprintf(&path, "%s/%s", s->dir, export_format_to_string(EXPORT_METRICS)) < 0)
		return -ENOMEM;
	if (read_file_full(path, SESSION_FILE_MAX, &metrics, &size) == 0)
		s->metrics_json = TAKE_PTR(metrics);
	*ret = TAKE_PTR(s);
	return 0;
}

static int compare_created(const void *a, const void *b)
{
	const Session *x = *(Session *const *)a, *y = *(Session *const *)b;

	return x->created_usec < y->created_usec ? -1 : x->created_usec > y->created_usec;
}

static bool is_session_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == 16 && s[n] == '\0';
}

int session_load_all(Manager *m)
{
	DIR *d = opendir(m->sessions_dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		Session *s = NULL;
		const char *reason = NULL;
		int k;

		if (!is_session_id(de->d_name))
			continue;
		k = session_load_one(m, de->d_name, &s, &reason);
		if (k == -ENOMEM) {
			r = k;
			break;
		}
		if (k < 0) {
			_cleanup_free_ char *path = NULL;

			if (asprintf(&path, "%s/%s", m->sessions_dir, de->d_name) >= 0)
				set_aside_corrupt(path);
			log_warning("set aside saved session '%s' as %s.corrupt: %s", de->d_name,
				    de->d_name, reason ?: strerror(-k));
			continue;
		}
		k = manager_add_session(m, s);
		if (k < 0) {
			session_free(s);
			r = k;
			break;
		}
	}
	closedir(d);
	if (r < 0)
		return r;
	if (m->n_sessions > 1)
		qsort(m->sessions, m->n_sessions, sizeof(*m->sessions), compare_created);
	return 0;
}
