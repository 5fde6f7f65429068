/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit test of the run store: put/get/replace/ownership, eviction of the
 * oldest, deletion, and reload from disk with corrupt files set aside.
 * Usage: test-run-store FIXTURES_DIR
 */
#include <dirent.h>
#include <errno.h>
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

static unsigned saved, corrupt;
static char dir[] = "/tmp/profd-test-runs.XXXXXX";

static void on_saved(int error, void *userdata)
{
	if (error < 0)
		fprintf(stderr, "FAIL: a run file was not written: %s\n", strerror(-error));
	test_failures += error < 0;
	saved++;
}

static void on_corrupt(const char *path, const char *reason, void *userdata)
{
	corrupt++;
}

/* Wait until 'n' writes have been confirmed. */
static void wait_saved(sd_event *e, unsigned n)
{
	while (saved < n)
		sd_event_run(e, 1000000);
}

static RunProfile *load_fixture(const char *fixtures, const char *name, const char *run_id)
{
	_cleanup_free_ char *path = NULL, *data = NULL;
	RunProfile *p = NULL;
	size_t size;

	if (asprintf(&path, "%s/valid/%s", fixtures, name) < 0 ||
	    read_file_full(path, 1 << 20, &data, &size) < 0 || record_parse(data, size, &p, NULL) < 0) {
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

int main(int argc, char **argv)
{
	_cleanup_run_profile_ RunProfile *full = NULL, *sparse = NULL, *a = NULL, *b = NULL;
	_cleanup_free_ char *full_json = NULL, *garbage = NULL;
	RunStore *s = NULL;
	const StoredRun *run;
	sd_event *e = NULL;
	int r;

	if (argc != 2 || !mkdtemp(dir) || sd_event_default(&e) < 0)
		return 2;
	full = load_fixture(argv[1], "full.json", NULL);
	sparse = load_fixture(argv[1], "sparse.json", NULL);
	a = load_fixture(argv[1], "full.json", "run-a");
	b = load_fixture(argv[1], "full.json", "run-b");
	record_serialise(full, false, &full_json);

	r = run_store_new(dir, 3, e, &s);
	CHECK(r == 0, "run_store_new: %s", strerror(-r));
	CHECK(run_store_load(s, 1 << 20, on_corrupt, NULL) == 0, "an empty store loads nothing");

	/* put, get, ownership */
	CHECK(run_store_put(s, full, 0, 111, &run, on_saved, NULL) == 0, "put full");
	CHECK(run && strcmp(run->json, full_json) == 0, "the stored JSON is not the serialised record");
	CHECK(run_store_put(s, sparse, 1000, 222, NULL, on_saved, NULL) == 0, "put sparse");
	run = run_store_get(s, "77-1764460800000000001-3");
	CHECK(run && run->owner == 1000 && run->status == RUN_STATE_FAILED && run->finished_usec == 222,
	      "sparse run: owner/status/finished wrong");
	CHECK(run_store_put(s, full, 1000, 333, NULL, on_saved, NULL) == -EPERM,
	      "another uid replaced a run");
	CHECK(run_store_put(s, full, 0, 444, NULL, on_saved, NULL) == 0, "the owner cannot replace");
	CHECK(run_store_count(s) == 2, "replacing added a run: %zu", run_store_count(s));
	CHECK(run_store_get(s, full->identity.run_id)->finished_usec == 444, "replacement not kept");
	CHECK(!run_store_get(s, "nope"), "an unknown id was found");
	wait_saved(e, 3);
	CHECK(count_files(".run") == 2, "%u run files after a replacement, want 2", count_files(".run"));

	/* the cap of 3 evicts the oldest: sparse is older than the replaced full */
	CHECK(run_store_put(s, a, 0, 555, NULL, on_saved, NULL) == 0, "put a");
	CHECK(run_store_put(s, b, 0, 666, NULL, on_saved, NULL) == 0, "put b");
	CHECK(run_store_count(s) == 3, "%zu runs, the cap is 3", run_store_count(s));
	CHECK(!run_store_get(s, "77-1764460800000000001-3"), "the oldest run was not evicted");
	CHECK(strcmp(run_store_at(s, 0)->run_id, full->identity.run_id) == 0 &&
		      strcmp(run_store_at(s, 2)->run_id, "run-b") == 0,
	      "runs are not oldest first");

	/* delete */
	CHECK(run_store_delete(s, "run-a") == 0, "delete run-a");
	CHECK(run_store_delete(s, "run-a") == -ENOENT, "a deleted run was deleted again");
	wait_saved(e, 5);
	run_store_free(s); /* waits for the queued removals */
	CHECK(count_files(".run") == 2, "%u run files, want 2", count_files(".run"));

	/* reload, with a corrupt file and a file that is no record */
	write_file_atomic(dir, "00000000000000aa.run", "garbage", 7);
	if (asprintf(&garbage, "profd-run-v1 owner=0 finished_usec=1\n{\"schema\":\"x\"}\n") > 0)
		write_file_atomic(dir, "00000000000000ab.run", garbage, strlen(garbage));
	write_file_atomic(dir, "unrelated", "x", 1);
	r = run_store_new(dir, 3, e, &s);
	CHECK(r == 0, "reopen");
	r = run_store_load(s, 1 << 20, on_corrupt, NULL);
	CHECK(r == 2, "reload found %d runs, want 2", r);
	CHECK(corrupt == 2, "%u corrupt files reported, want 2", corrupt);
	CHECK(count_files(".corrupt") == 2, "corrupt files not set aside");
	run = run_store_get(s, full->identity.run_id);
	CHECK(run && run->owner == 0 && run->finished_usec == 444 && strcmp(run->json, full_json) == 0,
	      "the reloaded run differs");
	CHECK(run_store_get(s, "run-b") && !run_store_get(s, "run-a"), "reload has the wrong runs");
	CHECK(strcmp(run_store_at(s, 1)->run_id, "run-b") == 0, "reload lost the age order");
	/* new runs sort after the reloaded ones */
	CHECK(run_store_put(s, sparse, 1000, 777, NULL, on_saved, NULL) == 0, "put after reload");
	CHECK(strcmp(run_store_at(s, 2)->run_id, "77-1764460800000000001-3") == 0,
	      "a new run is not the newest after a reload");
	run_store_free(s);

	sd_event_unref(e);
	if (test_failures == 0)
		printf("ok - run store\n");
	else {
		fprintf(stderr, "state left in %s\n", dir);
		return 1;
	}
	remove_dir(dir);
	return 0;
}
