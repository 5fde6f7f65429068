/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "hash.h"
#include "run-store.h"
#include "worker-pool.h"

#define RUN_FILE_MAGIC "profd-run-v1"
#define RUN_FILE_SUFFIX ".run"

struct RunStore {
	char *dir;
	WorkerPool *io; /* one thread: file writes and removals happen in the order queued */
	uint32_t max_runs;
	uint64_t next_seq;
	StoredRun **runs; /* oldest first */
	size_t n_runs, n_allocated;
	StoredRun **buckets; /* run_id -> run, chained */
	size_t n_buckets;
};

static StoredRun *stored_run_free(StoredRun *r)
{
	if (!r)
		return NULL;
	free(r->run_id);
	free(r->source_kind);
	free(r->workload_class);
	free(r->json);
	free(r);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(StoredRun *, stored_run_free);

static StoredRun **bucket_of(const RunStore *s, const char *run_id)
{
	return &s->buckets[hash_fnv1a(HASH_FNV1A_BASIS, run_id, strlen(run_id)) & (s->n_buckets - 1)];
}

static int index_grow(RunStore *s)
{
	size_t n = s->n_buckets ? s->n_buckets * 2 : 64;
	StoredRun **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	free(s->buckets);
	s->buckets = b;
	s->n_buckets = n;
	for (size_t i = 0; i < s->n_runs; i++) {
		StoredRun **head = bucket_of(s, s->runs[i]->run_id);

		s->runs[i]->hash_next = *head;
		*head = s->runs[i];
	}
	return 0;
}

static void index_remove(RunStore *s, const StoredRun *r)
{
	for (StoredRun **p = bucket_of(s, r->run_id); *p; p = &(*p)->hash_next)
		if (*p == r) {
			*p = r->hash_next;
			return;
		}
}

const StoredRun *run_store_get(const RunStore *s, const char *run_id)
{
	if (s->n_buckets == 0)
		return NULL;
	for (const StoredRun *r = *bucket_of(s, run_id); r; r = r->hash_next)
		if (strcmp(r->run_id, run_id) == 0)
			return r;
	return NULL;
}

/* Take ownership of 'r' and append it (runs arrive oldest first). */
static int store_append(RunStore *s, StoredRun *r)
{
	StoredRun **head;
	int k;

	if (s->n_runs == s->n_allocated) {
		size_t n = s->n_allocated ? s->n_allocated * 2 : 64;
		StoredRun **a = realloc(s->runs, n * sizeof(*a));

		if (!a)
			return -ENOMEM;
		s->runs = a;
		s->n_allocated = n;
	}
	if (s->n_runs >= s->n_buckets) {
		k = index_grow(s);
		if (k < 0)
			return k;
	}
	s->runs[s->n_runs++] = r;
	head = bucket_of(s, r->run_id);
	r->hash_next = *head;
	*head = r;
	if (r->seq >= s->next_seq)
		s->next_seq = r->seq + 1;
	return 0;
}

static void run_file_name(uint64_t seq, char buf[static 32])
{
	snprintf(buf, 32, "%016" PRIx64 RUN_FILE_SUFFIX, seq);
}

/* A change to the files, done on the store's I/O thread. */
typedef struct FileJob {
	RunStore *store;
	char name[32];     /* file to write, or "" */
	char *content;
	size_t size;
	char old_name[32]; /* file to remove after the write, or "" */
	int error;
	RunStoreDoneFn done;
	void *userdata;
} FileJob;

static void file_job_work(void *userdata)
{
	FileJob *j = userdata;

	if (j->name[0])
		j->error = write_file_atomic(j->store->dir, j->name, j->content, j->size);
	/* the replacement is durable (or failed and the old file must stay) */
	if (j->old_name[0] && j->error == 0) {
		_cleanup_free_ char *path = NULL;

		if (asprintf(&path, "%s/%s", j->store->dir, j->old_name) >= 0)
			unlink(path);
	}
}

static void file_job_done(void *userdata)
{
	FileJob *j = userdata;

	if (j->done)
		j->done(j->error, j->userdata);
	free(j->content);
	free(j);
}

/* Queue writing 'content' (taken over) as 'seq' and/or removing 'old_seq' (UINT64_MAX: none). */
static int store_queue_files(RunStore *s, uint64_t seq, char *content, size_t size,
			     uint64_t old_seq, RunStoreDoneFn done, void *userdata)
{
	FileJob *j = calloc(1, sizeof(*j));
	int r;

	if (!j) {
		free(content);
		return -ENOMEM;
	}
	*j = (FileJob){ .store = s, .content = content, .size = size, .done = done,
			.userdata = userdata };
	if (content)
		run_file_name(seq, j->name);
	if (old_seq != UINT64_MAX)
		run_file_name(old_seq, j->old_name);
	r = worker_pool_submit(s->io, file_job_work, file_job_done, j);
	if (r < 0) {
		free(j->content);
		free(j);
	}
	return r;
}

/* Forget the run at index i, and (soon) its file. */
static void store_remove_at(RunStore *s, size_t i)
{
	StoredRun *r = s->runs[i];

	/* if this fails the file stays, and the run returns after a restart: no harm */
	store_queue_files(s, 0, NULL, 0, r->seq, NULL, NULL);
	index_remove(s, r);
	memmove(s->runs + i, s->runs + i + 1, (s->n_runs - i - 1) * sizeof(*s->runs));
	s->n_runs--;
	stored_run_free(r);
}

static int stored_run_new(const RunProfile *p, const char *json, size_t json_size, uid_t owner,
			  uint64_t seq, uint64_t finished_usec, StoredRun **ret)
{
	_cleanup_(stored_run_freep) StoredRun *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	*r = (StoredRun){
		.owner = owner,
		.seq = seq,
		.finished_usec = finished_usec,
		.status = p->status,
		.wall_time_ns = p->wall_time_ns,
		.json_size = json_size,
		.run_id = strdup(p->identity.run_id),
		.source_kind = strdup(p->identity.source_kind),
		.workload_class = strdup(p->identity.workload_class),
		.json = strndup(json, json_size),
	};
	if (!r->run_id || !r->source_kind || !r->workload_class || !r->json)
		return -ENOMEM;
	*ret = TAKE_PTR(r);
	return 0;
}

int run_store_new(const char *dir, uint32_t max_runs, sd_event *event, RunStore **ret)
{
	_cleanup_(run_store_freep) RunStore *s = NULL;
	int r;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return negative_errno();
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dir = strdup(dir);
	if (!s->dir)
		return -ENOMEM;
	s->max_runs = max_runs;
	r = worker_pool_new(event, 1, &s->io);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

RunStore *run_store_free(RunStore *s)
{
	if (!s)
		return NULL;
	worker_pool_free(s->io); /* pending writes finish first */
	for (size_t i = 0; i < s->n_runs; i++)
		stored_run_free(s->runs[i]);
	free(s->runs);
	free(s->buckets);
	free(s->dir);
	free(s);
	return NULL;
}

void run_store_freep(RunStore **s)
{
	run_store_free(*s);
}

/* Parse one run file; *ret_reason says why a file is refused. */
static int run_file_load(RunStore *s, const char *path, uint64_t seq, size_t max_record_bytes,
			 StoredRun **ret, char **ret_reason)
{
	_cleanup_run_profile_ RunProfile *p = NULL;
	_cleanup_free_ char *data = NULL, *json = NULL;
	unsigned long long owner, finished;
	size_t size;
	char *body;
	int n = 0, r;

	r = read_file_full(path, max_record_bytes + 256, &data, &size);
	if (r < 0) {
		*ret_reason = strdup(r == -EFBIG ? "larger than the record size limit"
						 : "cannot be read");
		return r;
	}
	body = memchr(data, '\n', size);
	if (!body ||
	    sscanf(data, RUN_FILE_MAGIC " owner=%llu finished_usec=%llu%n", &owner, &finished, &n) != 2 ||
	    data + n != body) {
		*ret_reason = strdup("bad header line");
		return -EBADMSG;
	}
	body++;
	r = record_parse(body, size - (size_t)(body - data), &p, ret_reason);
	if (r < 0)
		return r;
	/* store the canonical form, as a submitted record is */
	r = record_serialise(p, false, &json);
	if (r < 0)
		return r;
	return stored_run_new(p, json, strlen(json), (uid_t)owner, seq, finished, ret);
}

static int compare_seq(const void *a, const void *b)
{
	const StoredRun *x = *(StoredRun *const *)a, *y = *(StoredRun *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int run_store_load(RunStore *s, size_t max_record_bytes, RunStoreCorruptFn on_corrupt,
		   void *userdata)
{
	DIR *d;
	struct dirent *de;
	int r = 0, loaded = 0;

	d = opendir(s->dir);
	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		_cleanup_free_ char *path = NULL, *reason = NULL;
		StoredRun *run = NULL;
		unsigned long long seq;
		int n = 0, k;

		if (sscanf(de->d_name, "%16llx" RUN_FILE_SUFFIX "%n", &seq, &n) != 1 ||
		    de->d_name[n] != '\0' || n != 16 + (int)strlen(RUN_FILE_SUFFIX))
			continue; /* temp files, *.corrupt, strangers */
		if (asprintf(&path, "%s/%s", s->dir, de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		k = run_file_load(s, path, seq, max_record_bytes, &run, &reason);
		if (k == -ENOMEM) {
			r = k;
			break;
		}
		if (k < 0) {
			set_aside_corrupt(path);
			if (on_corrupt)
				on_corrupt(path, reason ? reason : strerror(-k), userdata);
			continue;
		}
		if (run_store_get(s, run->run_id)) {
			/* two files with one id: only a crash mid-replacement leaves this */
			set_aside_corrupt(path);
			if (on_corrupt)
				on_corrupt(path, "duplicate run id", userdata);
			stored_run_free(run);
			continue;
		}
		k = store_append(s, run);
		if (k < 0) {
			stored_run_free(run);
			r = k;
			break;
		}
		loaded++;
	}
	closedir(d);
	if (r < 0)
		return r;
	if (s->n_runs > 1)
		qsort(s->runs, s->n_runs, sizeof(*s->runs), compare_seq);
	while (s->n_runs > s->max_runs)
		store_remove_at(s, 0);
	return loaded;
}

int run_store_put(RunStore *s, const RunProfile *p, uid_t owner, uint64_t finished_usec,
		  const StoredRun **ret, RunStoreDoneFn done, void *userdata)
{
	_cleanup_free_ char *json = NULL, *file = NULL;
	_cleanup_(stored_run_freep) StoredRun *run = NULL;
	const StoredRun *old;
	uint64_t old_seq = UINT64_MAX;
	int n, r;

	old = run_store_get(s, p->identity.run_id);
	if (old && old->owner != owner)
		return -EPERM;

	r = record_serialise(p, false, &json);
	if (r < 0)
		return r;
	n = asprintf(&file, RUN_FILE_MAGIC " owner=%u finished_usec=%" PRIu64 "\n%s\n",
		     (unsigned)owner, finished_usec, json);
	if (n < 0)
		return -ENOMEM;
	r = stored_run_new(p, json, strlen(json), owner, s->next_seq, finished_usec, &run);
	if (r < 0)
		return r;
	r = store_append(s, run);
	if (r < 0)
		return r;
	/* the old file goes once the new one is durable, in the same job */
	if (old) {
		old_seq = old->seq;
		index_remove(s, old);
		for (size_t i = 0; i < s->n_runs; i++)
			if (s->runs[i] == old) {
				memmove(s->runs + i, s->runs + i + 1,
					(s->n_runs - i - 1) * sizeof(*s->runs));
				s->n_runs--;
				break;
			}
		stored_run_free((StoredRun *)old);
	}
	old = TAKE_PTR(run);
	r = store_queue_files(s, old->seq, TAKE_PTR(file), (size_t)n, old_seq, done, userdata);
	if (r < 0)
		return r; /* kept in memory only; the caller hears it was not saved */
	while (s->n_runs > s->max_runs)
		store_remove_at(s, 0);
	if (ret)
		*ret = old; /* the newest run is never the one evicted */
	return 0;
}

int run_store_delete(RunStore *s, const char *run_id)
{
	const StoredRun *r = run_store_get(s, run_id);

	if (!r)
		return -ENOENT;
	for (size_t i = 0; i < s->n_runs; i++)
		if (s->runs[i] == r) {
			store_remove_at(s, i);
			break;
		}
	return 0;
}

size_t run_store_count(const RunStore *s)
{
	return s->n_runs;
}

const StoredRun *run_store_at(const RunStore *s, size_t i)
{
	return i < s->n_runs ? s->runs[i] : NULL;
}
