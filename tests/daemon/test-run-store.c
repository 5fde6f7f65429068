/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit test of the run store: runs per owner (the same id for two uids),
 * replacement, records on disk and not in memory once durable, per-uid
 * quotas evicting only the uid's own runs, the global limit evicting from
 * the uid holding the most, durable deletion, a failed write forgetting the
 * run (and bringing back the one it replaced), reload from disk with
 * corrupt files and records profd refuses today set aside, and the records
 * kept in memory: within their budget, least recently used dropped first,
 * never a deleted or replaced run's.
 * Usage: test-run-store FIXTURES_DIR
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "atomic-file.h"
#include "cleanup.h"
#include "run-store.h"
#include "test-util.h"

static unsigned done_calls, corrupt, corrupt_not_set_aside;
static int last_error;
static char dir[] = "/tmp/profd-test-runs.XXXXXX";

static void on_done(int error, void *userdata)
{
	last_error = error;
	done_calls++;
}

static void on_corrupt(const char *name, const char *reason, int set_aside_error, void *userdata)
{
	corrupt++;
	corrupt_not_set_aside += set_aside_error < 0;
}

/* Wait until 'n' completions arrived in all. */
static void wait_done(sd_event *e, unsigned n)
{
	while (done_calls < n)
		sd_event_run(e, 1000000);
}

static RunProfile *load_fixture(const char *fixtures, const char *name, const char *run_id)
{
	_cleanup_free_ char *path = NULL, *data = NULL;
	RunProfile *p = NULL;
	size_t size;

	if (asprintf(&path, "%s/valid/%s", fixtures, name) < 0 ||
	    read_file_at(AT_FDCWD, path, 1 << 20, &data, &size) < 0 ||
	    record_parse(data, size, &p, NULL) < 0) {
		fprintf(stderr, "cannot load fixture %s\n", name);
		exit(1);
	}
	if (run_id)
		run_identity_set_string(&p->identity.run_id, run_id);
	return p;
}

static unsigned count_files(const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name), s = strlen(suffix);

		n += l > s && strcmp(de->d_name + l - s, suffix) == 0;
	}
	closedir(d);
	return n;
}

static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		_cleanup_free_ char *p = NULL;

		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    asprintf(&p, "%s/%s", path, de->d_name) > 0)
			unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

static RunStore *open_store_at(const char *path, sd_event *e, const RunStoreLimits *limits)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	RunStore *s = NULL;
	int r = run_store_new(fd, limits, e, &s);

	if (r < 0) {
		fprintf(stderr, "run_store_new: %s\n", strerror(-r));
		exit(1);
	}
	return s;
}

static RunStore *open_store(sd_event *e, const RunStoreLimits *limits)
{
	return open_store_at(dir, e, limits);
}

/* The JSON kept of uid 1000's run 'run_id', NULL when not kept (or no such run). */
static const char *kept_json(RunStore *s, const char *run_id)
{
	const StoredRun *run = run_store_find(s, 1000, run_id);

	return run ? run_store_json(s, run) : NULL;
}

/* RunCacheBytes: eight records fit, the least recently used go, hidden runs are never served. */
static void test_kept(sd_event *e, const char *fixtures, unsigned *n)
{
	_cleanup_run_profile_ RunProfile *sparse = NULL;
	_cleanup_free_ char *kept_dir = NULL, *json = NULL, *sparse_json = NULL, *read = NULL;
	RunStoreLimits limits = { .max_runs = 100, .max_runs_per_user = 100, .max_bytes = 1 << 20,
				  .max_bytes_per_user = 1 << 20 };
	RunProfile *p[10];
	char id[16];
	const StoredRun *run;
	RunStore *s;
	uint64_t seq;
	size_t size, read_size;
	int r;

	for (unsigned i = 0; i < 10; i++) {
		snprintf(id, sizeof(id), "kept-%u", i);
		p[i] = load_fixture(fixtures, "full.json", id);
	}
	sparse = load_fixture(fixtures, "sparse.json", "kept-3");
	if (record_serialise(p[0], false, &json) < 0 || record_serialise(sparse, false, &sparse_json) < 0 ||
	    asprintf(&kept_dir, "%s.kept", dir) < 0 || mkdir(kept_dir, 0700) < 0)
		exit(2);
	size = strlen(json); /* of every kept-N: their ids are as long */
	limits.cache_bytes = 8 * size;
	s = open_store_at(kept_dir, e, &limits);

	/* stored: kept once durable, up to the budget, the oldest dropped first */
	for (unsigned i = 0; i < 10; i++)
		CHECK(run_store_put(s, p[i], 1000, i, NULL, on_done, NULL) == 0, "put kept-%u", i);
	*n += 10;
	wait_done(e, *n);
	CHECK(run_store_kept_bytes(s) == 8 * size, "%" PRIu64 " bytes kept, the budget holds %zu",
	      run_store_kept_bytes(s), 8 * size);
	CHECK(!kept_json(s, "kept-0") && !kept_json(s, "kept-1"), "the two oldest records are kept");
	for (unsigned i = 2; i < 10; i++) {
		snprintf(id, sizeof(id), "kept-%u", i);
		CHECK(kept_json(s, id) && strlen(kept_json(s, id)) == size, "%s is not kept", id);
	}

	/* read back from its file: kept, and the least recently used (kept-2) goes */
	run = run_store_find(s, 1000, "kept-0");
	r = run_store_read(s, run->seq, 1 << 20, &read, &read_size);
	CHECK(r == 0, "reading kept-0: %s", strerror(-r));
	run_store_keep(s, run->seq, TAKE_PTR(read), read_size);
	CHECK(kept_json(s, "kept-0") && strstr(kept_json(s, "kept-0"), "\"kept-0\""),
	      "a record read from its file is not kept");
	CHECK(!kept_json(s, "kept-2") && kept_json(s, "kept-3"),
	      "not the least recently used record made room");
	CHECK(run_store_kept_bytes(s) == 8 * size, "%" PRIu64 " bytes kept after a read",
	      run_store_kept_bytes(s));

	/* deleted: not served from the moment it is hidden, and a read finishing late keeps nothing */
	run = run_store_find(s, 1000, "kept-9");
	seq = run->seq;
	CHECK(run_store_delete(s, run, on_done, NULL) == 0, "delete kept-9");
	CHECK(!run_store_json(s, run), "a run being deleted is served from memory");
	CHECK(run_store_kept_bytes(s) == 7 * size, "a deleted run's record is still kept");
	wait_done(e, ++*n);
	run_store_keep(s, seq, strdup(json), size);
	CHECK(run_store_kept_bytes(s) == 7 * size, "a deleted run's record was kept after its read");

	/* replaced: the new record is served at once and kept, the old one's bytes are given back */
	CHECK(run_store_put(s, sparse, 1000, 11, NULL, on_done, NULL) == 0, "replace kept-3");
	CHECK(kept_json(s, "kept-3") && strcmp(kept_json(s, "kept-3"), sparse_json) == 0,
	      "the replaced record is served");
	wait_done(e, ++*n);
	CHECK(kept_json(s, "kept-3") && strcmp(kept_json(s, "kept-3"), sparse_json) == 0,
	      "the replaced record is served once the new one is durable");
	CHECK(run_store_kept_bytes(s) == 6 * size + strlen(sparse_json),
	      "%" PRIu64 " bytes kept after a replacement, want %zu", run_store_kept_bytes(s),
	      6 * size + strlen(sparse_json));

	/* another uid finds no run, so nothing kept can be served to it */
	CHECK(!run_store_find(s, 2000, "kept-4") && kept_json(s, "kept-4"),
	      "uid 2000 finds uid 1000's kept run");
	run_store_free(s);

	/* a record over an eighth of the budget is never kept; loading keeps nothing */
	limits.cache_bytes = 8 * size - 8;
	s = open_store_at(kept_dir, e, &limits);
	CHECK(run_store_load(s, 1 << 20, on_corrupt, NULL) == 9, "reload of the kept runs");
	CHECK(run_store_kept_bytes(s) == 0 && !kept_json(s, "kept-4"), "loading kept records");
	run = run_store_find(s, 1000, "kept-4");
	r = run_store_read(s, run->seq, 1 << 20, &read, &read_size);
	CHECK(r == 0, "reading kept-4: %s", strerror(-r));
	run_store_keep(s, run->seq, TAKE_PTR(read), read_size);
	CHECK(run_store_put(s, p[5], 1000, 12, NULL, on_done, NULL) == 0, "replace kept-5");
	wait_done(e, ++*n);
	CHECK(run_store_kept_bytes(s) == 0, "a record over an eighth of the budget was kept");
	run_store_free(s);

	for (unsigned i = 0; i < 10; i++)
		run_profile_free(p[i]);
	remove_dir(kept_dir);
}

int main(int argc, char **argv)
{
	_cleanup_run_profile_ RunProfile *full = NULL, *sparse = NULL, *a = NULL, *b = NULL,
					 *c = NULL, *d = NULL, *ctrl = NULL;
	_cleanup_free_ char *full_json = NULL, *garbage = NULL, *json = NULL, *bad = NULL,
			    *failed_dir = NULL;
	RunStoreLimits limits = { .max_runs = 5, .max_runs_per_user = 2, .max_bytes = 1 << 20,
				  .max_bytes_per_user = 1 << 20 };
	RunStore *s = NULL;
	const StoredRun *run, *root_full;
	sd_event *e = NULL;
	_cleanup_close_ int dfd = -1;
	size_t size;
	unsigned n = 0;
	int r;

	if (argc != 2 || !mkdtemp(dir) || sd_event_default(&e) < 0)
		return 2;
	full = load_fixture(argv[1], "full.json", NULL);
	sparse = load_fixture(argv[1], "sparse.json", NULL);
	a = load_fixture(argv[1], "full.json", "run-a");
	b = load_fixture(argv[1], "full.json", "run-b");
	c = load_fixture(argv[1], "full.json", "run-c");
	d = load_fixture(argv[1], "full.json", "run-d");
	record_serialise(full, false, &full_json);

	s = open_store(e, &limits);
	CHECK(run_store_load(s, 1 << 20, on_corrupt, NULL) == 0, "an empty store loads nothing");

	/* put: visible at once from memory, then from its file */
	CHECK(run_store_put(s, full, 0, 111, &root_full, on_done, NULL) == 0, "put full");
	CHECK(root_full && root_full->pending_json && strcmp(root_full->pending_json, full_json) == 0,
	      "a new run is not served from memory until its file is durable");
	wait_done(e, ++n);
	CHECK(last_error == 0, "the write failed: %s", strerror(-last_error));
	root_full = run_store_find(s, 0, full->identity.run_id);
	CHECK(root_full && !root_full->pending_json, "a durable run still holds its record in memory");
	r = run_store_read(s, root_full->seq, 1 << 20, &json, &size);
	CHECK(r == 0 && size == strlen(full_json) && strcmp(json, full_json) == 0,
	      "the file does not hold the serialised record: %s", strerror(-r));

	/* the same id for another uid is another run; neither sees the other's */
	CHECK(run_store_put(s, full, 1000, 222, &run, on_done, NULL) == 0, "uid 1000 reuses the id");
	wait_done(e, ++n);
	run = run_store_find(s, 1000, full->identity.run_id);
	CHECK(run && run->owner == 1000 && run->finished_usec == 222, "uid 1000 does not find its run");
	run = run_store_find(s, 0, full->identity.run_id);
	CHECK(run && run->owner == 0, "root does not find its own run first");
	CHECK(!run_store_find(s, 2000, full->identity.run_id), "uid 2000 sees another uid's run");
	CHECK(run_store_put(s, sparse, 1000, 333, NULL, on_done, NULL) == 0, "put sparse");
	wait_done(e, ++n);
	run = run_store_find(s, 0, sparse->identity.run_id);
	CHECK(run && run->owner == 1000 && run->status == RUN_STATE_FAILED,
	      "root does not see uid 1000's run");

	/* replacing keeps one run and one file per owner and id */
	CHECK(run_store_put(s, full, 0, 444, NULL, on_done, NULL) == 0, "replace");
	CHECK(run_store_count_visible(s, (uid_t)-1) == 3, "replacing added a run: %zu",
	      run_store_count_visible(s, (uid_t)-1));
	wait_done(e, ++n);
	run = run_store_find(s, 0, full->identity.run_id);
	CHECK(run && run->finished_usec == 444, "the replacement is not the run found");
	run_store_free(s); /* the removal of the replaced file is queued: let it finish */
	s = open_store(e, &limits);
	CHECK(run_store_load(s, 1 << 20, on_corrupt, NULL) == 3, "reload after a replacement");
	CHECK(count_files(".run") == 3, "%u run files after a replacement, want 3", count_files(".run"));

	/* uid 1000's quota of 2: its own oldest goes, nobody else's */
	CHECK(run_store_put(s, a, 1000, 555, NULL, on_done, NULL) == 0, "put a");
	wait_done(e, ++n);
	CHECK(run_store_count_visible(s, 1000) == 2, "uid 1000 holds %zu runs, its quota is 2",
	      run_store_count_visible(s, 1000));
	CHECK(!run_store_find(s, 1000, full->identity.run_id), "uid 1000's oldest run was kept");
	CHECK(run_store_find(s, 0, full->identity.run_id)->owner == 0, "root's run was evicted");

	/* everyone's limit of 5: of the uids holding the most (root and 1000, 2 runs each besides
	 * the new one) the one with the older oldest run (1000's sparse) loses it */
	CHECK(run_store_put(s, b, 2000, 666, NULL, on_done, NULL) == 0, "put b");
	CHECK(run_store_put(s, c, 0, 777, NULL, on_done, NULL) == 0, "put c");
	CHECK(run_store_put(s, d, 0, 888, NULL, on_done, NULL) == 0, "put d"); /* root: 3 now */
	n += 3;
	wait_done(e, n);
	CHECK(run_store_count_visible(s, (uid_t)-1) == 5, "%zu runs, the limit is 5",
	      run_store_count_visible(s, (uid_t)-1));
	CHECK(run_store_find(s, 2000, "run-b"), "uid 2000's only run was evicted");
	CHECK(run_store_count_visible(s, 0) == 3 && !run_store_find(s, 1000, sparse->identity.run_id),
	      "not the oldest run of the biggest holders went: root holds %zu",
	      run_store_count_visible(s, 0));
	CHECK(run_store_put(s, b, 2000, 999, NULL, on_done, NULL) == 0, "replace b");
	CHECK(run_store_put(s, a, 2000, 999, NULL, on_done, NULL) == 0, "put a for 2000");
	n += 2;
	wait_done(e, n);
	CHECK(run_store_count_visible(s, 0) == 2 && run_store_count_visible(s, 2000) == 2,
	      "root (the biggest holder) did not give up its oldest: root %zu, 2000 %zu",
	      run_store_count_visible(s, 0), run_store_count_visible(s, 2000));
	CHECK(!run_store_find(s, 0, full->identity.run_id), "root's oldest run was kept");

	/* delete: gone at once, durable when done says so */
	run = run_store_find(s, 0, "run-c");
	CHECK(run && run_store_delete(s, run, on_done, NULL) == 0, "delete run-c");
	CHECK(!run_store_find(s, 0, "run-c"), "a run being deleted is still found");
	wait_done(e, ++n);
	CHECK(last_error == 0, "the deletion failed: %s", strerror(-last_error));

	run_store_free(s);

	/* a second directory: the record alone over a uid's byte quota, and writes that fail */
	limits.max_bytes_per_user = 100;
	if (asprintf(&failed_dir, "%s.gone", dir) < 0 || mkdir(failed_dir, 0700) < 0)
		return 2;
	dfd = open(failed_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = run_store_new(dfd, &limits, e, &s);
	CHECK(r == 0, "a store on a second directory");
	CHECK(run_store_put(s, c, 3000, 1, NULL, on_done, NULL) == -EFBIG,
	      "a record over the uid's byte quota was taken");
	CHECK(run_store_put(s, a, 0, 1, NULL, on_done, NULL) == 0, "root has no byte quota");
	wait_done(e, ++n);
	remove_dir(failed_dir); /* creating files in it fails from now on */
	CHECK(run_store_put(s, a, 0, 2, NULL, on_done, NULL) == 0, "replace in the removed directory");
	run = run_store_find(s, 0, "run-a");
	CHECK(run && run->finished_usec == 2, "the replacement is not visible at once");
	wait_done(e, ++n);
	CHECK(last_error < 0, "a write into a removed directory succeeded");
	run = run_store_find(s, 0, "run-a");
	CHECK(run && run->finished_usec == 1, "after a failed replacement the old run is not back");
	CHECK(run_store_put(s, b, 0, 3, NULL, on_done, NULL) == 0, "put a new run");
	wait_done(e, ++n);
	CHECK(!run_store_find(s, 0, "run-b"), "a run whose file could not be written is still listed");
	run_store_free(s);
	dfd = safe_close(dfd);
	limits.max_bytes_per_user = 1 << 20;

	/* reload: a corrupt file, a non-record, a record with control characters, a stranger */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	write_file_atomic(dfd, "00000000000000aa.run", "garbage", 7);
	if (asprintf(&garbage, "profd-run-v1 owner=0 finished_usec=1\n{\"schema\":\"x\"}\n") > 0)
		write_file_atomic(dfd, "00000000000000ab.run", garbage, strlen(garbage));
	ctrl = load_fixture(argv[1], "full.json", "evil\x1b[2J");
	json = (free(json), NULL);
	if (record_serialise(ctrl, false, &json) >= 0 &&
	    asprintf(&bad, "profd-run-v1 owner=0 finished_usec=1\n%s\n", json) > 0)
		write_file_atomic(dfd, "00000000000000ac.run", bad, strlen(bad));
	write_file_atomic(dfd, "unrelated", "x", 1);
	corrupt = 0;
	s = open_store(e, &limits);
	r = run_store_load(s, 1 << 20, on_corrupt, NULL);
	CHECK(r == 4, "reload found %d runs, want 4", r);
	CHECK(corrupt == 3 && corrupt_not_set_aside == 0, "%u corrupt files reported, want 3", corrupt);
	CHECK(count_files(".corrupt") == 3, "corrupt files not set aside");
	run = run_store_find(s, 2000, "run-b");
	CHECK(run && run->owner == 2000 && run->finished_usec == 999, "the reloaded run differs");
	CHECK(run_store_find(s, 0, "run-d") && !run_store_find(s, 0, "run-c") &&
		      run_store_find(s, 1000, "run-a") && run_store_find(s, 2000, "run-a"),
	      "reload has the wrong runs");
	CHECK(strcmp(run_store_at(s, 0)->run_id, "run-a") == 0 && run_store_at(s, 0)->owner == 1000,
	      "reload lost the age order");
	/* new runs sort after the reloaded ones */
	CHECK(run_store_put(s, sparse, 1000, 1, NULL, on_done, NULL) == 0, "put after reload");
	CHECK(strcmp(run_store_at(s, run_store_count(s) - 1)->run_id, sparse->identity.run_id) == 0,
	      "a new run is not the newest after a reload");
	wait_done(e, ++n);
	run_store_free(s);

	test_kept(e, argv[1], &n);

	sd_event_unref(e);
	if (test_failures == 0)
		printf("ok - run store\n");
	else {
		fprintf(stderr, "state left in %s\n", dir);
		return test_result();
	}
	remove_dir(dir);
	return 0;
}
