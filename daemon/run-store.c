/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "atomic-file.h"
#include "caller-text.h"
#include "cleanup.h"
#include "hash.h"
#include "id-table.h"
#include "run-store.h"
#include "worker-pool.h"

#define RUN_FILE_MAGIC "profd-run-v1"
#define RUN_FILE_SUFFIX ".run"
/* The header line before the JSON: magic, owner and time, at most this long. */
#define RUN_FILE_HEADER_MAX 128

/* What one uid holds (visible runs only). */
typedef struct OwnerUse {
	uid_t uid;
	size_t runs;
	uint64_t bytes;
} OwnerUse;

struct RunStore {
	int dir_fd;
	WorkerPool *io; /* one thread: file writes and removals happen in the order queued */
	RunStoreLimits limits;
	uint64_t next_seq;
	StoredRun **runs; /* by seq, oldest first */
	size_t n_runs, n_allocated;
	IdTable index; /* run_id -> positions in runs (every owner's, every state) */
	OwnerUse *owners; /* as many slots as runs */
	size_t n_owners, owners_allocated;
	size_t visible;
	uint64_t visible_bytes;
	RunCache kept; /* records of visible runs */
};

static StoredRun *stored_run_free(StoredRun *r)
{
	if (!r)
		return NULL;
	free(r->run_id);
	free(r->source_kind);
	free(r->workload_class);
	free(r->pending_json);
	free(r);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(StoredRun *, stored_run_free);

bool stored_run_visible(const StoredRun *r)
{
	return !r->superseded && !r->deleting;
}

/* ---- what each owner holds ---- */

static OwnerUse *owner_use(const RunStore *s, uid_t uid)
{
	for (size_t i = 0; i < s->n_owners; i++)
		if (s->owners[i].uid == uid)
			return &s->owners[i];
	return NULL;
}

/*
 * Count 'r' in (delta 1) or out (delta -1) of what its owner and everyone
 * hold. Never fails: store_append() keeps room for one owner per run.
 */
static void account(RunStore *s, const StoredRun *r, int delta)
{
	OwnerUse *u = owner_use(s, r->owner);

	if (!u) {
		if (delta < 0)
			return;
		u = &s->owners[s->n_owners++];
		*u = (OwnerUse){ .uid = r->owner };
	}
	if (delta > 0) {
		u->runs++;
		u->bytes += r->json_size;
		s->visible++;
		s->visible_bytes += r->json_size;
	} else {
		u->runs--;
		u->bytes -= r->json_size;
		s->visible--;
		s->visible_bytes -= r->json_size;
		if (u->runs == 0)
			*u = s->owners[--s->n_owners];
	}
}

/* Flip a visibility flag, keeping the accounts. */
static void set_hidden(RunStore *s, StoredRun *r, bool *flag, bool value)
{
	bool was = stored_run_visible(r);

	*flag = value;
	if (was != stored_run_visible(r))
		account(s, r, was ? -1 : 1);
	if (!stored_run_visible(r))
		run_cache_drop(&s->kept, &r->cached); /* never served hidden, even if it comes back */
}

size_t run_store_count_visible(const RunStore *s, uid_t owner)
{
	const OwnerUse *u;

	if (owner == (uid_t)-1)
		return s->visible;
	u = owner_use(s, owner);
	return u ? u->runs : 0;
}

/* ---- the index ---- */

static uint64_t hash_run_id(const char *run_id)
{
	return hash_string(0, run_id);
}

static uint64_t hash_position(const void *userdata, uint32_t position)
{
	const RunStore *s = userdata;

	return hash_run_id(s->runs[position]->run_id);
}

typedef struct RunIdKey {
	const RunStore *store;
	const char *run_id;
} RunIdKey;

static bool same_run_id(const void *userdata, uint32_t position)
{
	const RunIdKey *k = userdata;

	return strcmp(k->store->runs[position]->run_id, k->run_id) == 0;
}

static bool same_position(const void *userdata, uint32_t position)
{
	return position == *(const uint32_t *)userdata;
}

/* Index the run at 'position' (room reserved). */
static void index_add(RunStore *s, uint32_t position)
{
	id_table_insert(&s->index, id_table_empty_slot(&s->index, hash_position(s, position)),
			position);
}

/* Unindex the run at 'position', which is about to leave runs: later positions move down. */
static void index_remove(RunStore *s, uint32_t position)
{
	uint32_t slot;

	if (id_table_find(&s->index, hash_position(s, position), same_position, &position, &slot))
		id_table_remove(&s->index, slot, hash_position, s);
	for (uint32_t i = 0; i <= s->index.mask; i++)
		if (s->index.slots[i] != ID_TABLE_EMPTY && s->index.slots[i] > position)
			s->index.slots[i]--;
}

/*
 * The newest run named 'run_id' of 'owner' ((uid_t)-1: of anyone) older than
 * 'before_seq', visible or (any_state) not.
 */
static StoredRun *find_newest(const RunStore *s, const char *run_id, uid_t owner,
			      uint64_t before_seq, bool any_state)
{
	RunIdKey key = { s, run_id };
	StoredRun *best = NULL;
	uint32_t slot;

	if (!s->index.slots)
		return NULL;
	for (bool found = id_table_find(&s->index, hash_run_id(run_id), same_run_id, &key, &slot);
	     found;
	     found = id_table_find_from(&s->index, id_table_next(&s->index, slot), same_run_id, &key,
					&slot)) {
		StoredRun *r = s->runs[s->index.slots[slot]];

		if ((owner == (uid_t)-1 || r->owner == owner) && r->seq < before_seq &&
		    (any_state || stored_run_visible(r)) && (!best || r->seq > best->seq))
			best = r;
	}
	return best;
}

/* The newest run of 'owner' named 'run_id', visible or (any_state) not. */
static StoredRun *find_own(const RunStore *s, uid_t owner, const char *run_id, bool any_state)
{
	return find_newest(s, run_id, owner, UINT64_MAX, any_state);
}

/* The newest run with the owner and id of 'r' that is older than 'r', in any state. */
static StoredRun *find_older(const RunStore *s, const StoredRun *r)
{
	return find_newest(s, r->run_id, r->owner, r->seq, true);
}

const StoredRun *run_store_find(const RunStore *s, uid_t caller, const char *run_id)
{
	const StoredRun *r = find_own(s, caller, run_id, false);

	if (r || caller != 0)
		return r;
	return find_newest(s, run_id, (uid_t)-1, UINT64_MAX, false);
}

static size_t position_of_seq(const RunStore *s, uint64_t seq)
{
	size_t lo = 0, hi = s->n_runs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->runs[mid]->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static StoredRun *find_seq(const RunStore *s, uint64_t seq)
{
	size_t i = position_of_seq(s, seq);

	return i < s->n_runs && s->runs[i]->seq == seq ? s->runs[i] : NULL;
}

/* Take ownership of 'r', the newest run, and count it if visible. */
static int store_append(RunStore *s, StoredRun *r)
{
	int k;

	k = ARRAY_RESERVE(s->runs, s->n_allocated, s->n_runs + 1, 64);
	if (k >= 0)
		k = ARRAY_RESERVE(s->owners, s->owners_allocated, s->n_runs + 1, 64);
	if (k < 0)
		return k;
	k = id_table_reserve(&s->index, 1, hash_position, s);
	if (k < 0)
		return k;
	if (stored_run_visible(r))
		account(s, r, 1);
	s->runs[s->n_runs] = r;
	index_add(s, (uint32_t)s->n_runs++);
	if (r->seq >= s->next_seq)
		s->next_seq = r->seq + 1;
	return 0;
}

/* Forget 'r' (the file is not touched). */
static void store_forget(RunStore *s, StoredRun *r)
{
	size_t i = position_of_seq(s, r->seq);

	if (stored_run_visible(r))
		account(s, r, -1);
	run_cache_drop(&s->kept, &r->cached);
	index_remove(s, (uint32_t)i);
	memmove(s->runs + i, s->runs + i + 1, (s->n_runs - i - 1) * sizeof(*s->runs));
	s->n_runs--;
	stored_run_free(r);
}

/* ---- files, changed on the store's I/O thread ---- */

static void run_file_name(uint64_t seq, char buf[static 32])
{
	snprintf(buf, 32, "%016" PRIx64 RUN_FILE_SUFFIX, seq);
}

typedef enum FileOp {
	FILE_WRITE,  /* write the run's file, then settle the store */
	FILE_DELETE, /* remove the run's file (DeleteRun), then forget the run */
	FILE_EVICT,  /* remove the file of a run already forgotten */
} FileOp;

typedef struct FileJob {
	RunStore *store;
	FileOp op;
	uint64_t seq;
	char *content;
	size_t size;
	int error;
	RunStoreDoneFn done;
	void *userdata;
} FileJob;

static void file_job_work(void *userdata)
{
	FileJob *j = userdata;
	char name[32];

	run_file_name(j->seq, name);
	if (j->op == FILE_WRITE)
		j->error = write_file_atomic(j->store->dir_fd, name, j->content, j->size);
	else
		j->error = unlink_durable(j->store->dir_fd, name, 0);
}

static void queue_evict(RunStore *s, uint64_t seq);
static void evict(RunStore *s, StoredRun *r);

/* A write is durable: older runs of that owner and id go; or it failed: the run goes. */
static void settle_write(RunStore *s, uint64_t seq, int error)
{
	StoredRun *r = find_seq(s, seq);
	StoredRun *older;

	if (!r) {
		/* evicted or deleted while it was written: its file must not stay */
		if (error == 0)
			queue_evict(s, seq);
		return;
	}
	if (error < 0) {
		/* the run it was to replace is the owner's again, unless a newer one is on its way */
		set_hidden(s, r, &r->deleting, true);
		older = find_older(s, r);
		if (older && older->superseded && !find_own(s, r->owner, r->run_id, false))
			set_hidden(s, older, &older->superseded, false);
		store_forget(s, r);
		return;
	}
	/* in memory anyway: kept while the budget allows (a hidden run is never served) */
	if (stored_run_visible(r))
		run_cache_put(&s->kept, &r->cached, TAKE_PTR(r->pending_json), r->json_size);
	else
		r->pending_json = (free(r->pending_json), NULL);
	while ((older = find_older(s, r)))
		evict(s, older);
}

static void file_job_done(void *userdata)
{
	FileJob *j = userdata;
	StoredRun *r;

	switch (j->op) {
	case FILE_WRITE:
		settle_write(j->store, j->seq, j->error);
		break;
	case FILE_DELETE:
		r = find_seq(j->store, j->seq);
		if (r && j->error == 0)
			store_forget(j->store, r);
		else if (r)
			set_hidden(j->store, r, &r->deleting, false);
		break;
	case FILE_EVICT:
		break;
	}
	if (j->done)
		j->done(j->error, j->userdata);
	free(j->content);
	free(j);
}

static int queue_file_job(RunStore *s, FileOp op, uint64_t seq, char *content, size_t size,
			  RunStoreDoneFn done, void *userdata)
{
	FileJob *j = calloc(1, sizeof(*j));
	int r;

	if (!j) {
		free(content);
		return -ENOMEM;
	}
	*j = (FileJob){ .store = s, .op = op, .seq = seq, .content = content, .size = size,
			.done = done, .userdata = userdata };
	r = worker_pool_submit(s->io, file_job_work, file_job_done, j);
	if (r < 0) {
		free(j->content);
		free(j);
	}
	return r;
}

static void queue_evict(RunStore *s, uint64_t seq)
{
	/* if this fails the file stays, and the run returns after a restart: no harm */
	(void)queue_file_job(s, FILE_EVICT, seq, NULL, 0, NULL, NULL);
}

/* ---- limits ---- */

static bool over_quota(const RunStore *s, uid_t uid)
{
	const OwnerUse *u = owner_use(s, uid);

	return uid != 0 && u &&
	       (u->runs > s->limits.max_runs_per_user || u->bytes > s->limits.max_bytes_per_user);
}

static bool over_limit(const RunStore *s)
{
	return s->visible > s->limits.max_runs || s->visible_bytes > s->limits.max_bytes;
}

/* The oldest visible run of 'uid' other than 'keep'. */
static StoredRun *oldest_of(const RunStore *s, uid_t uid, const StoredRun *keep)
{
	for (size_t i = 0; i < s->n_runs; i++)
		if (s->runs[i]->owner == uid && s->runs[i] != keep && stored_run_visible(s->runs[i]))
			return s->runs[i];
	return NULL;
}

/* What 'u' holds in runs or bytes, not counting 'keep'. */
static uint64_t held_by(const OwnerUse *u, const StoredRun *keep, bool by_bytes)
{
	bool holds_keep = keep && keep->owner == u->uid && stored_run_visible(keep);

	if (by_bytes)
		return u->bytes - (holds_keep ? keep->json_size : 0);
	return u->runs - (holds_keep ? 1 : 0);
}

/*
 * The oldest run of the uid holding the most (runs or bytes, whichever is
 * over), not counting 'keep'; of uids holding as much, the one whose oldest
 * run is older.
 */
static StoredRun *eviction_victim(const RunStore *s, const StoredRun *keep)
{
	bool by_bytes = s->visible_bytes > s->limits.max_bytes;
	StoredRun *victim = NULL;
	uint64_t most = 0;

	for (size_t i = 0; i < s->n_owners; i++) {
		uint64_t held = held_by(&s->owners[i], keep, by_bytes);
		StoredRun *oldest;

		if (held == 0 || held < most)
			continue;
		oldest = oldest_of(s, s->owners[i].uid, keep);
		if (held > most || (victim && oldest && oldest->seq < victim->seq)) {
			victim = oldest;
			most = held;
		}
	}
	return victim;
}

/* Forget 'r' and remove its file. */
static void evict(RunStore *s, StoredRun *r)
{
	uint64_t seq = r->seq;

	store_forget(s, r);
	queue_evict(s, seq);
}

/* After 'keep' was added for its owner: that owner's quota first, then everyone's limit. */
static void enforce_limits(RunStore *s, const StoredRun *keep, uid_t owner)
{
	StoredRun *victim;

	while (over_quota(s, owner) && (victim = oldest_of(s, owner, keep)))
		evict(s, victim);
	while (over_limit(s) && (victim = eviction_victim(s, keep)))
		evict(s, victim);
}

/* ---- the store ---- */

int run_store_new(int dir_fd, const RunStoreLimits *limits, sd_event *event, RunStore **ret)
{
	_cleanup_(run_store_freep) RunStore *s = NULL;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
	if (s->dir_fd < 0)
		return negative_errno();
	s->limits = *limits;
	s->kept.budget = limits->cache_bytes;
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
	worker_pool_free(s->io); /* pending writes finish first, and settle */
	for (size_t i = 0; i < s->n_runs; i++) {
		run_cache_drop(&s->kept, &s->runs[i]->cached);
		stored_run_free(s->runs[i]);
	}
	free(s->runs);
	id_table_done(&s->index);
	free(s->owners);
	safe_close(s->dir_fd);
	free(s);
	return NULL;
}

static int stored_run_new(const RunProfile *p, size_t json_size, uid_t owner, uint64_t seq,
			  uint64_t finished_usec, StoredRun **ret)
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
	};
	if (!r->run_id || !r->source_kind || !r->workload_class)
		return -ENOMEM;
	*ret = TAKE_PTR(r);
	return 0;
}

/* Split a run file into its header values and its JSON (in place). */
static int run_file_parse(char *data, size_t size, uid_t *ret_owner, uint64_t *ret_finished,
			  char **ret_json, size_t *ret_json_size)
{
	unsigned long long owner, finished;
	char *body = memchr(data, '\n', size < RUN_FILE_HEADER_MAX ? size : RUN_FILE_HEADER_MAX);
	size_t n;
	int k = 0;

	if (!body)
		return -EBADMSG;
	*body++ = '\0';
	if (sscanf(data, RUN_FILE_MAGIC " owner=%llu finished_usec=%llu%n", &owner, &finished, &k) != 2 ||
	    data[k] != '\0' || owner >= UINT32_MAX)
		return -EBADMSG;
	n = size - (size_t)(body - data);
	if (n > 0 && body[n - 1] == '\n')
		body[--n] = '\0';
	*ret_owner = (uid_t)owner;
	*ret_finished = finished;
	*ret_json = body;
	*ret_json_size = n;
	return 0;
}

int run_store_read(const RunStore *s, uint64_t seq, size_t max, char **ret_json, size_t *ret_size)
{
	_cleanup_free_ char *data = NULL;
	char name[32], *json;
	uint64_t finished;
	size_t size, n;
	uid_t owner;
	int r;

	run_file_name(seq, name);
	r = read_file_at(s->dir_fd, name, max + RUN_FILE_HEADER_MAX + 1, &data, &size);
	if (r < 0)
		return r;
	r = run_file_parse(data, size, &owner, &finished, &json, &n);
	if (r < 0)
		return r;
	memmove(data, json, n + 1);
	*ret_json = TAKE_PTR(data);
	*ret_size = n;
	return 0;
}

/* Parse one run file; *ret_reason says why a file is refused. */
static int run_file_load(RunStore *s, const char *name, uint64_t seq, size_t max_record_bytes,
			 StoredRun **ret, char **ret_reason)
{
	_cleanup_run_profile_ RunProfile *p = NULL;
	_cleanup_free_ char *data = NULL;
	uint64_t finished;
	size_t size, json_size;
	uid_t owner;
	char *json;
	int r;

	r = read_file_at(s->dir_fd, name, max_record_bytes + RUN_FILE_HEADER_MAX + 1, &data, &size);
	if (r < 0) {
		*ret_reason = strdup(r == -EFBIG ? "larger than the record size limit"
				     : r == -ELOOP || r == -EBADF ? "not a regular file"
								  : "cannot be read");
		return r;
	}
	r = run_file_parse(data, size, &owner, &finished, &json, &json_size);
	if (r < 0) {
		*ret_reason = strdup("bad header line");
		return r;
	}
	r = record_parse(json, json_size, &p, ret_reason);
	if (r < 0)
		return r;
	/* stored before profd refused such records: they must not make replies unbounded now */
	r = record_identity_check(&p->identity, ret_reason);
	if (r < 0)
		return -EBADMSG;
	return stored_run_new(p, json_size, owner, seq, finished, ret);
}

static int compare_seq(const void *a, const void *b)
{
	const StoredRun *x = *(StoredRun *const *)a, *y = *(StoredRun *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int load_files(RunStore *s, DIR *d, size_t max_record_bytes, RunStoreCorruptFn on_corrupt,
		      void *userdata)
{
	struct dirent *de;
	int loaded = 0;

	while ((de = readdir(d))) {
		_cleanup_free_ char *reason = NULL;
		StoredRun *run = NULL;
		unsigned long long seq;
		int n = 0, k;

		if (sscanf(de->d_name, "%16llx" RUN_FILE_SUFFIX "%n", &seq, &n) != 1 ||
		    de->d_name[n] != '\0' || n != 16 + (int)strlen(RUN_FILE_SUFFIX))
			continue; /* temp files, *.corrupt, strangers */
		k = run_file_load(s, de->d_name, seq, max_record_bytes, &run, &reason);
		if (k == -ENOMEM)
			return k;
		if (k < 0) {
			int e = set_aside_corrupt(s->dir_fd, de->d_name);

			if (on_corrupt)
				on_corrupt(de->d_name, reason ? reason : strerror(-k), e, userdata);
			continue;
		}
		/* unsorted for now: store_append() only needs next_seq right */
		if (ARRAY_RESERVE(s->runs, s->n_allocated, s->n_runs + 1, 64) < 0) {
			stored_run_free(run);
			return -ENOMEM;
		}
		s->runs[s->n_runs++] = run;
		loaded++;
	}
	return loaded;
}

int run_store_load(RunStore *s, size_t max_record_bytes, RunStoreCorruptFn on_corrupt,
		   void *userdata)
{
	_cleanup_free_ StoredRun **all = NULL;
	size_t n;
	DIR *d;
	int loaded, r;

	r = dir_fd_open_stream(s->dir_fd, &d);
	if (r < 0)
		return r;
	loaded = load_files(s, d, max_record_bytes, on_corrupt, userdata);
	closedir(d);

	/* index them oldest first; of two files of one owner and id (a crash mid-replacement) the newer counts */
	all = TAKE_PTR(s->runs);
	n = s->n_runs;
	s->n_runs = s->n_allocated = 0;
	if (n > 1)
		qsort(all, n, sizeof(*all), compare_seq);
	for (size_t i = 0; i < n; i++) {
		if (r < 0) {
			stored_run_free(all[i]);
			continue;
		}
		r = store_append(s, all[i]);
		if (r < 0) {
			stored_run_free(all[i]);
			continue;
		}
		for (StoredRun *older; (older = find_older(s, all[i]));)
			evict(s, older);
	}
	if (loaded < 0)
		return loaded;
	if (r < 0)
		return r;
	/* limits lowered since: every uid's quota, then everyone's limit */
	for (size_t i = 0; i < s->n_owners; i++) {
		StoredRun *victim;
		uid_t uid = s->owners[i].uid;

		while (over_quota(s, uid) && (victim = oldest_of(s, uid, NULL)))
			evict(s, victim);
	}
	enforce_limits(s, NULL, 0);
	return loaded;
}

int run_store_put_json(RunStore *s, const RunProfile *p, char *json_in, uid_t owner,
		       uint64_t finished_usec, const StoredRun **ret, RunStoreDoneFn done,
		       void *userdata)
{
	_cleanup_free_ char *json = json_in, *file = NULL;
	_cleanup_(stored_run_freep) StoredRun *run = NULL;
	StoredRun *old, *added;
	size_t size = strlen(json);
	int n, r;

	if (size > s->limits.max_bytes || (owner != 0 && size > s->limits.max_bytes_per_user))
		return -EFBIG;
	n = asprintf(&file, RUN_FILE_MAGIC " owner=%u finished_usec=%" PRIu64 "\n%s\n",
		     (unsigned)owner, finished_usec, json);
	if (n < 0)
		return -ENOMEM;
	r = stored_run_new(p, size, owner, s->next_seq, finished_usec, &run);
	if (r < 0)
		return r;
	run->pending_json = TAKE_PTR(json);
	old = find_own(s, owner, p->identity.run_id, false);
	r = store_append(s, run);
	if (r < 0)
		return r;
	added = TAKE_PTR(run);
	r = queue_file_job(s, FILE_WRITE, added->seq, TAKE_PTR(file), (size_t)n, done, userdata);
	if (r < 0) {
		store_forget(s, added);
		return r;
	}
	/* the old run stays until the new one is durable, hidden, so that it can come back */
	if (old)
		set_hidden(s, old, &old->superseded, true);
	enforce_limits(s, added, owner);
	if (ret)
		*ret = added;
	return 0;
}

int run_store_put(RunStore *s, const RunProfile *p, uid_t owner, uint64_t finished_usec,
		  const StoredRun **ret, RunStoreDoneFn done, void *userdata)
{
	char *json = NULL;
	int r;

	r = record_serialise(p, false, &json);
	if (r < 0)
		return r;
	return run_store_put_json(s, p, json, owner, finished_usec, ret, done, userdata);
}

int run_store_delete(RunStore *s, const StoredRun *run, RunStoreDoneFn done, void *userdata)
{
	StoredRun *r = find_seq(s, run->seq);
	int k;

	if (!r || !stored_run_visible(r))
		return -ENOENT;
	k = queue_file_job(s, FILE_DELETE, r->seq, NULL, 0, done, userdata);
	if (k < 0)
		return k;
	set_hidden(s, r, &r->deleting, true);
	return 0;
}

const char *run_store_json(RunStore *s, const StoredRun *run)
{
	StoredRun *r = find_seq(s, run->seq);

	if (!r || !stored_run_visible(r))
		return NULL;
	return r->pending_json ?: run_cache_get(&s->kept, &r->cached);
}

void run_store_keep(RunStore *s, uint64_t seq, char *json, size_t size)
{
	StoredRun *r = find_seq(s, seq);

	/* deleted, replaced or evicted while it was read: nothing to keep it for */
	if (!r || !stored_run_visible(r) || r->pending_json) {
		free(json);
		return;
	}
	run_cache_put(&s->kept, &r->cached, json, size);
}

uint64_t run_store_kept_bytes(const RunStore *s)
{
	return s->kept.bytes;
}

size_t run_store_count(const RunStore *s)
{
	return s->n_runs;
}

const StoredRun *run_store_at(const RunStore *s, size_t i)
{
	return i < s->n_runs ? s->runs[i] : NULL;
}
