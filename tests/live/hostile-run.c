/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostile-run ADDRESS RUN_ID RECORD_FILE STOP_FILE: a live run's program that
 * attacks profd through its span ring. It opens a run (BeginRun, the largest
 * ring profd grants), then until STOP_FILE exists writes garbage everywhere
 * in the ring as fast as it can: every slot claimed and named with random
 * thread ids, heads far ahead and going back, random records, the claim
 * counters and transitions at their maximum. Then it tries FinishRun with a
 * record that is not one, with another run's record, with its own record
 * (RECORD_FILE, whose run_id must be RUN_ID) and once more. Prints "live
 * SESSION_PATH", then "flooded ROUNDS", then "finish WHAT RESULT" per call,
 * RESULT "ok" or the D-Bus error name.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus-client.h"
#include "cleanup.h"
#include "span-ring.h"

#define THREADS 1024
#define SPANS_PER_THREAD 1024

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void flood(void *ring, size_t size)
{
	SpanRingHeader *h = ring;
	uint32_t slot_size = (uint32_t)(sizeof(SpanRingSlot) + SPANS_PER_THREAD * sizeof(SpanRingRecord));

	atomic_store(&h->slots_claimed, UINT32_MAX);
	atomic_store(&h->slots_refused, (uint32_t)next());
	atomic_store(&h->transitions_claimed, UINT32_MAX);
	for (uint32_t i = 0; i < SPAN_RING_TRANSITIONS; i++) {
		atomic_store(&h->transitions[i].time_ns, next());
		atomic_store(&h->transitions[i].state, (uint32_t)next() % 16);
		atomic_store(&h->transitions[i].ready, (uint32_t)next() % 80);
	}
	for (uint32_t i = 0; i < THREADS; i++) {
		SpanRingSlot *slot = span_ring_slot(ring, sizeof(SpanRingHeader), slot_size, i);

		atomic_store(&slot->tid, (uint32_t)next());
		atomic_store(&slot->head, next() % 4 == 0 ? next() : atomic_load(&slot->head) + SPANS_PER_THREAD);
		for (uint32_t k = 0; k < 64; k++)
			slot->records[next() % SPANS_PER_THREAD] = (SpanRingRecord){
				.begin_ns = next(), .end_ns = next(), .stage = (uint32_t)next() % 32 };
	}
	/* and some random bytes anywhere, the header's geometry included */
	for (int i = 0; i < 256; i++)
		((volatile uint8_t *)ring)[next() % size] = (uint8_t)next();
}

static const char *finish(sd_bus *bus, const char *run_id, const char *json)
{
	static char result[256];
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	r = sd_bus_call_method(bus, "org.profd.Profiler1", "/org/profd/Profiler1",
			       "org.profd.Profiler1.Manager", "FinishRun", &error, NULL, "ss", run_id, json);
	snprintf(result, sizeof(result), "%s", r >= 0 ? "ok" : error.name ?: strerror(-r));
	sd_bus_error_free(&error);
	return result;
}

/* The run's ring, mapped; its run id and session path stay in 'reply'. */
static int begin_run(sd_bus *bus, const char *run_id, sd_bus_message **reply, const char **ret_path,
		     void **ret_ring, size_t *ret_size)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	const char *id;
	struct stat st;
	void *ring;
	int fd, r;

	r = sd_bus_call_method(bus, "org.profd.Profiler1", "/org/profd/Profiler1",
			       "org.profd.Profiler1.Manager", "BeginRun", &error, reply, "a{sv}", 3,
			       "run_id", "s", run_id, "threads", "u", THREADS, "spans_per_thread", "u",
			       SPANS_PER_THREAD);
	if (r >= 0)
		r = sd_bus_message_read(*reply, "soh", &id, ret_path, &fd);
	if (r < 0) {
		fprintf(stderr, "hostile-run: BeginRun: %s\n", error.message ?: strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 ||
	    (ring = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "hostile-run: cannot map the ring: %m\n");
		return -errno;
	}
	*ret_ring = ring;
	*ret_size = (size_t)st.st_size;
	return 0;
}

int main(int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_free_ char *record = NULL, *other = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	const char *path;
	unsigned long rounds = 0;
	size_t record_size = 0, ring_size = 0;
	void *ring;
	char *at;
	int r;

	if (argc != 5) {
		fprintf(stderr, "usage: hostile-run ADDRESS RUN_ID RECORD_FILE STOP_FILE\n");
		return 2;
	}
	f = fopen(argv[3], "re");
	if (!f || getdelim(&record, &record_size, 0, f) < 0) {
		fprintf(stderr, "hostile-run: cannot read '%s'\n", argv[3]);
		return 1;
	}
	r = bus_client_open(argv[1], &bus);
	if (r < 0) {
		fprintf(stderr, "hostile-run: cannot connect to '%s': %s\n", argv[1], strerror(-r));
		return 1;
	}
	r = begin_run(bus, argv[2], &reply, &path, &ring, &ring_size);
	if (r < 0)
		return 1;
	printf("live %s\n", path);
	fflush(stdout);
	while (access(argv[4], F_OK) < 0) {
		flood(ring, ring_size);
		rounds++;
	}
	printf("flooded %lu\n", rounds);

	/* a run id of someone else's: the record's own id is not this run's */
	other = strdup(record);
	at = other ? strstr(other, argv[2]) : NULL;
	if (at)
		*at = 'X';
	printf("finish not-json %s\n", finish(bus, argv[2], "{\"schema\": "));
	printf("finish other-id %s\n", finish(bus, argv[2], other ?: ""));
	printf("finish own %s\n", finish(bus, argv[2], record));
	printf("finish again %s\n", finish(bus, argv[2], record));
	munmap(ring, ring_size);
	return 0;
}
