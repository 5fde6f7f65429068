/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stack-sizes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "dwarf-unwind.h"
#include "sampling-session.h"

/* One line an entry, least recently used first: uid dev ino size mtime_sec mtime_nsec bytes. */
#define FILE_MAGIC "profd-stack-sizes 1\n"
#define LINE_MAX_BYTES 160
#define FILE_MAX_BYTES (sizeof(FILE_MAGIC) + STACK_SIZES_MAX * LINE_MAX_BYTES)
#define UID_MAX_ENTRIES (STACK_SIZES_MAX / 4)

typedef struct Entry {
	StackSizeKey key;
	uint32_t bytes;
	uint64_t used; /* larger = more recently */
} Entry;

struct StackSizes {
	pthread_mutex_t lock;
	int state_fd; /* ours; -1: not saved */
	Entry entries[STACK_SIZES_MAX];
	size_t n;
	uint64_t clock;
};

static bool key_equal(const StackSizeKey *a, const StackSizeKey *b)
{
	return a->uid == b->uid && a->exe.dev == b->exe.dev && a->exe.ino == b->exe.ino &&
	       a->exe.size == b->exe.size && a->exe.mtime_sec == b->exe.mtime_sec &&
	       a->exe.mtime_nsec == b->exe.mtime_nsec;
}

static Entry *find(StackSizes *s, const StackSizeKey *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (key_equal(&s->entries[i].key, key))
			return &s->entries[i];
	return NULL;
}

static uint32_t clamp_bytes(uint32_t bytes)
{
	bytes = bytes < UNWIND_STACK_MIN ? UNWIND_STACK_MIN : bytes;
	return bytes > SAMPLING_MAX_STACK_BYTES ? SAMPLING_MAX_STACK_BYTES : bytes;
}

/*
 * The slot for a new entry of 'uid': a free one, else the least recently used
 * of that uid when it has its share already, else the least recently used.
 */
static Entry *slot_for(StackSizes *s, uint32_t uid)
{
	Entry *oldest = NULL, *oldest_of_uid = NULL;
	size_t of_uid = 0;

	if (s->n < STACK_SIZES_MAX)
		return &s->entries[s->n++];
	for (size_t i = 0; i < s->n; i++) {
		Entry *e = &s->entries[i];

		if (!oldest || e->used < oldest->used)
			oldest = e;
		if (e->key.uid == uid) {
			of_uid++;
			if (!oldest_of_uid || e->used < oldest_of_uid->used)
				oldest_of_uid = e;
		}
	}
	return of_uid >= UID_MAX_ENTRIES ? oldest_of_uid : oldest;
}

static int parse(StackSizes *s, const char *data)
{
	const char *p;

	if (strncmp(data, FILE_MAGIC, strlen(FILE_MAGIC)) != 0)
		return -EBADMSG;
	for (p = data + strlen(FILE_MAGIC); *p; p = strchr(p, '\n') + 1) {
		Entry e = { 0 };
		uint64_t dev, ino, size;
		int64_t sec;
		uint32_t uid, nsec, bytes;
		int end = 0;

		if (s->n == STACK_SIZES_MAX || !strchr(p, '\n'))
			return -EBADMSG;
		if (sscanf(p, "%" SCNu32 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNd64 " %" SCNu32
			      " %" SCNu32 "%n",
			   &uid, &dev, &ino, &size, &sec, &nsec, &bytes, &end) != 7 ||
		    p[end] != '\n' || nsec >= 1000000000U || bytes != clamp_bytes(bytes))
			return -EBADMSG;
		e.key = (StackSizeKey){ uid, { dev, ino, size, sec, nsec } };
		e.bytes = bytes;
		e.used = ++s->clock;
		if (find(s, &e.key))
			return -EBADMSG;
		s->entries[s->n++] = e;
	}
	return 0;
}

static int load(StackSizes *s)
{
	_cleanup_free_ char *data = NULL;
	size_t size;
	int r;

	r = read_file_at(s->state_fd, STACK_SIZES_FILE, FILE_MAX_BYTES, &data, &size);
	if (r == -ENOENT)
		return 0;
	if (r >= 0 && strlen(data) != size)
		r = -EBADMSG;
	if (r >= 0)
		r = parse(s, data);
	if (r == -EBADMSG || r == -EFBIG) {
		/* a damaged file costs the learned sizes, never the daemon */
		s->n = 0;
		return set_aside_corrupt(s->state_fd, STACK_SIZES_FILE);
	}
	return r;
}

static int compare_used(const void *a, const void *b)
{
	const Entry *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/* Rewrite the file (entries sorted by use, which keeps their order across a restart). */
static int save(StackSizes *s)
{
	_cleanup_free_ char *data = NULL;
	size_t size = 0;
	FILE *f;

	if (s->state_fd < 0)
		return 0;
	qsort(s->entries, s->n, sizeof(Entry), compare_used);
	f = open_memstream(&data, &size);
	if (!f)
		return -ENOMEM;
	fputs(FILE_MAGIC, f);
	for (size_t i = 0; i < s->n; i++) {
		const Entry *e = &s->entries[i];

		fprintf(f, "%" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRIu32
			   " %" PRIu32 "\n",
			e->key.uid, e->key.exe.dev, e->key.exe.ino, e->key.exe.size,
			e->key.exe.mtime_sec, e->key.exe.mtime_nsec, e->bytes);
	}
	if (fclose(f) != 0)
		return -ENOMEM;
	return write_file_atomic(s->state_fd, STACK_SIZES_FILE, data, size);
}

int stack_sizes_new(int state_fd, StackSizes **ret)
{
	_cleanup_(stack_sizes_freep) StackSizes *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->state_fd = -1;
	if (state_fd >= 0) {
		s->state_fd = fcntl(state_fd, F_DUPFD_CLOEXEC, 3);
		if (s->state_fd < 0)
			return negative_errno();
		r = load(s);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

StackSizes *stack_sizes_free(StackSizes *s)
{
	if (!s)
		return NULL;
	safe_close(s->state_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}

int stack_size_key_of_pid(pid_t pid, uid_t uid, StackSizeKey *ret)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st) < 0)
		return negative_errno();
	*ret = (StackSizeKey){ .uid = (uint32_t)uid, .exe = file_identity_of(&st) };
	return 0;
}

uint32_t stack_sizes_get(StackSizes *s, const StackSizeKey *key, uint32_t ceiling)
{
	uint32_t bytes = ceiling;
	Entry *e;

	pthread_mutex_lock(&s->lock);
	e = find(s, key);
	if (e) {
		e->used = ++s->clock;
		bytes = e->bytes < ceiling ? e->bytes : ceiling;
	}
	pthread_mutex_unlock(&s->lock);
	return bytes;
}

int stack_sizes_put(StackSizes *s, const StackSizeKey *key, uint32_t copied, uint32_t bytes)
{
	Entry *e;
	int r = 0;

	if (bytes == 0)
		return 0;
	bytes = clamp_bytes(bytes);
	pthread_mutex_lock(&s->lock);
	e = find(s, key);
	if (e && copied < e->bytes) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (!e) {
		e = slot_for(s, key->uid);
		*e = (Entry){ .key = *key };
	}
	e->used = ++s->clock;
	/* more at once (walks ran out of stack); less only when it is much less: no churn */
	if (bytes > e->bytes || bytes < e->bytes - e->bytes / 4) {
		e->bytes = bytes;
		r = save(s);
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}
