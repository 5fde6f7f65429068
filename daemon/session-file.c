/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-file.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "parse-number.h"

#define SESSION_FILE_MAX (64 * 1024)

typedef struct SessionFileKey {
	const char *key;
	SessionFieldKind kind;
	size_t offset;
} SessionFileKey;

#define FILE_KEY(key, kind, field) { key, SESSION_FIELD_##kind, offsetof(SessionProperties, field) },
#define BOTH_KEY(name, key, kind, field, flags) FILE_KEY(key, kind, field)
#define NO_KEY(...)

static const SessionFileKey session_file_keys[] = {
	SESSION_PROPERTY_TABLE(BOTH_KEY, FILE_KEY, NO_KEY)
};

static void write_value(FILE *f, const SessionFileKey *k, const SessionProperties *p)
{
	const char *field = (const char *)p + k->offset;
	const char *s;

	switch (k->kind) {
	case SESSION_FIELD_ID:
		fputs(field, f);
		break;
	case SESSION_FIELD_U32:
		fprintf(f, "%" PRIu32, *(const uint32_t *)field);
		break;
	case SESSION_FIELD_U64:
		fprintf(f, "%" PRIu64, *(const uint64_t *)field);
		break;
	case SESSION_FIELD_BOOL:
		fputc(*(const bool *)field ? '1' : '0', f);
		break;
	case SESSION_FIELD_STRING:
		/* a line per key: line breaks in an error message become spaces */
		for (s = *(char *const *)field ?: ""; *s; s++)
			fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
		break;
	case SESSION_FIELD_STATE:
		fputs(session_state_to_string(*(const SessionState *)field) ?: "failed", f);
		break;
	}
}

int session_file_write(int dir_fd, const SessionProperties *p)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;

	{
		_cleanup_fclose_ FILE *f = open_memstream(&buf, &size);

		if (!f)
			return -ENOMEM;
		for (size_t i = 0; i < ELEMENTSOF(session_file_keys); i++) {
			fprintf(f, "%s=", session_file_keys[i].key);
			write_value(f, &session_file_keys[i], p);
			fputc('\n', f);
		}
		if (fflush(f) != 0)
			return -ENOMEM;
	}
	return write_file_atomic(dir_fd, SESSION_FILE, buf, size);
}

/* A number of at most 'max'; anything else makes the file invalid (-EINVAL). */
static int parse_at_most(const char *v, uint64_t max, uint64_t *ret)
{
	uint64_t x;

	if (parse_u64(v, &x) < 0 || x > max)
		return -EINVAL;
	*ret = x;
	return 0;
}

static int read_value(const SessionFileKey *k, const char *v, const char *id,
		      SessionProperties *p)
{
	char *field = (char *)p + k->offset;
	uint64_t x;
	int r;

	switch (k->kind) {
	case SESSION_FIELD_ID:
		/* the directory names the session: the file must agree */
		return strcmp(v, id) == 0 ? 0 : -EINVAL;
	case SESSION_FIELD_U32:
		r = parse_at_most(v, UINT32_MAX, &x);
		if (r == 0)
			*(uint32_t *)field = (uint32_t)x;
		return r;
	case SESSION_FIELD_U64:
		r = parse_at_most(v, UINT64_MAX, &x);
		if (r == 0)
			*(uint64_t *)field = x;
		return r;
	case SESSION_FIELD_BOOL:
		r = parse_at_most(v, 1, &x);
		if (r == 0)
			*(bool *)field = x;
		return r;
	case SESSION_FIELD_STRING:
		return session_properties_set_string((char **)field, v);
	case SESSION_FIELD_STATE:
		r = session_state_from_string(v);
		if (r >= 0)
			*(SessionState *)field = r;
		return r < 0 ? r : 0;
	}
	return -EINVAL;
}

static const SessionFileKey *find_key(const char *key)
{
	for (size_t i = 0; i < ELEMENTSOF(session_file_keys); i++)
		if (strcmp(key, session_file_keys[i].key) == 0)
			return &session_file_keys[i];
	return NULL;
}

int session_file_read(int dir_fd, const char *id, SessionProperties *ret, const char **ret_reason)
{
	_cleanup_free_ char *data = NULL;
	SessionProperties p = {};
	bool have_id = false;
	char *line, *next;
	size_t size;
	int r;

	r = read_file_at(dir_fd, SESSION_FILE, SESSION_FILE_MAX, &data, &size);
	if (r < 0) {
		*ret_reason = "properties file missing or unreadable";
		return r;
	}
	snprintf(p.id, sizeof(p.id), "%s", id);
	for (line = data; line && *line; line = next) {
		const SessionFileKey *k;
		char *eq;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		eq = strchr(line, '=');
		if (!eq) {
			*ret_reason = "malformed line";
			r = -EBADMSG;
			break;
		}
		*eq = '\0';
		k = find_key(line);
		if (!k)
			continue; /* a key of a newer profd */
		r = read_value(k, eq + 1, id, &p);
		if (r < 0) {
			*ret_reason = k->kind == SESSION_FIELD_ID ? "id not the directory's" : "bad value";
			break;
		}
		have_id = have_id || k->kind == SESSION_FIELD_ID;
	}
	if (r >= 0 && !have_id) {
		*ret_reason = "id missing";
		r = -EBADMSG;
	}
	if (r < 0) {
		session_properties_done(&p);
		return r;
	}
	session_properties_update_duration(&p);
	*ret = p;
	return 0;
}
