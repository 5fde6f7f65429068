/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The program's side of a live run: BeginRun, the span ring, FinishRun (profd-live.h). */
#include "profd-live.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include "assert-return.h"
#include "bus-address.h"
#include "cleanup.h"
#include "parse-number.h"

#define BUS_NAME "org.profd.Profiler1"
#define MANAGER_PATH "/org/profd/Profiler1"
#define MANAGER_INTERFACE "org.profd.Profiler1.Manager"
/* FinishRun answers once the joined record is on disk: joining an hour of samples takes a while. */
#define FINISH_TIMEOUT_USEC (300ULL * 1000000)

struct ProfdLiveRun {
	sd_bus *bus;
	char *run_id;
	char *status; /* why not live */
	void *ring;
	size_t ring_size;
};

/* The ring of this process, for a forked child to let go of. */
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static void *current_ring;
static size_t current_ring_size;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Private memory in place of the shared ring: what still writes there harms nobody. */
static void replace_ring(void *ring, size_t size)
{
	(void)mmap(ring, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

static void release_ring_in_child(void)
{
	if (current_ring)
		replace_ring(current_ring, current_ring_size);
	current_ring = NULL;
}

static void register_atfork(void)
{
	(void)pthread_atfork(NULL, NULL, release_ring_in_child);
}

static int set_status(ProfdLiveRun *r, const char *what, int error)
{
	free(r->status);
	r->status = NULL;
	if (error ? asprintf(&r->status, "%s: %s", what, strerror(-error)) < 0
		  : !(r->status = strdup(what)))
		return -ENOMEM;
	return 0;
}

static int bus_open(const char *bus, sd_bus **ret)
{
	if (strcmp(bus, "system") == 0)
		return sd_bus_open_system(ret);
	if (strcmp(bus, "user") == 0)
		return sd_bus_open_user(ret);
	return bus_open_address(bus, true, ret);
}

/* A number from the environment (profctl record --stages passes its -F and -d so), 0 when unset or not one. */
static uint64_t env_number(const char *name, uint64_t max)
{
	const char *v = getenv(name);
	uint64_t n;

	return v && parse_u64(v, &n) >= 0 && n <= max ? n : 0;
}

static int append_options(sd_bus_message *m, SpanSession *s, const ProfdLiveOptions *o)
{
	const RunIdentity *id = span_session_identity(s);
	uint32_t hz = o->hz ?: (uint32_t)env_number(PROFD_LIVE_HZ_ENV, UINT32_MAX);
	uint64_t duration_usec = o->duration_usec ?: env_number(PROFD_LIVE_DURATION_ENV, UINT64_MAX);
	int r;

	r = sd_bus_message_open_container(m, 'a', "{sv}");
	if (r >= 0)
		r = sd_bus_message_append(m, "{sv}", "run_id", "s", id->run_id);
	if (r >= 0 && id->workload_class && *id->workload_class)
		r = sd_bus_message_append(m, "{sv}", "workload_class", "s", id->workload_class);
	if (r >= 0 && hz)
		r = sd_bus_message_append(m, "{sv}", "hz", "u", hz);
	if (r >= 0 && duration_usec)
		r = sd_bus_message_append(m, "{sv}", "duration_usec", "t", duration_usec);
	if (r >= 0 && o->threads)
		r = sd_bus_message_append(m, "{sv}", "threads", "u", o->threads);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}

/* BeginRun, and the ring it hands over mapped here; the reason in r->status on failure. */
static int begin(ProfdLiveRun *r, SpanSession *s, const ProfdLiveOptions *o, const char *bus)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	const char *run_id, *path;
	struct stat st;
	void *ring;
	int fd, k;

	k = bus_open(bus, &r->bus);
	if (k < 0)
		return set_status(r, "cannot connect to the bus", k) ?: k;
	k = sd_bus_message_new_method_call(r->bus, &m, BUS_NAME, MANAGER_PATH, MANAGER_INTERFACE,
					   "BeginRun");
	if (k >= 0)
		k = append_options(m, s, o);
	if (k >= 0)
		k = sd_bus_call(r->bus, m, 0, &error, &reply);
	if (k < 0) {
		char what[512];

		snprintf(what, sizeof(what), "profd refused the live run: %s",
			 error.message ?: strerror(-k));
		return set_status(r, what, 0) ?: k;
	}
	k = sd_bus_message_read(reply, "soh", &run_id, &path, &fd);
	if (k < 0)
		return set_status(r, "profd's answer to BeginRun is not one", k) ?: k;
	if (fstat(fd, &st) < 0 || st.st_size <= 0)
		return set_status(r, "the span ring from profd is unusable", -EBADMSG) ?: -EBADMSG;
	ring = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		return set_status(r, "cannot map the span ring", -errno) ?: -errno;
	r->ring = ring;
	r->ring_size = (size_t)st.st_size;
	r->run_id = strdup(run_id);
	if (!r->run_id)
		return -ENOMEM;
	k = span_session_attach_ring(s, ring, r->ring_size);
	if (k < 0)
		return set_status(r, "cannot write spans into the ring", k) ?: k;
	(void)pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&ring_lock);
	current_ring = ring;
	current_ring_size = r->ring_size;
	pthread_mutex_unlock(&ring_lock);
	free(r->status);
	r->status = NULL;
	return 0;
}

int profd_live_begin(SpanSession *s, const ProfdLiveOptions *o, ProfdLiveRun **ret)
{
	const ProfdLiveOptions none = {};
	ProfdLiveRun *r;
	const char *bus;
	int k;

	assert_return(ret, -EINVAL);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	o = o ?: &none;
	bus = o->bus ?: getenv(PROFD_LIVE_ENV);
	if (!bus || !*bus) {
		k = set_status(r, "not asked for (" PROFD_LIVE_ENV " is not set)", 0);
		if (k == 0 && o->required)
			k = -EINVAL;
	} else {
		k = begin(r, s, o, bus);
		/* a live run is a bonus: without one the program goes on as it always did */
		if (k < 0 && k != -ENOMEM && !o->required)
			k = 0;
	}
	if (k < 0) {
		profd_live_free(r);
		return k;
	}
	if (r->status)
		r->bus = sd_bus_flush_close_unref(r->bus);
	*ret = r;
	return 0;
}

bool profd_live_is_live(const ProfdLiveRun *r)
{
	return r && !r->status;
}

const char *profd_live_status(const ProfdLiveRun *r)
{
	return r ? r->status : "no live run";
}

const char *profd_live_run_id(const ProfdLiveRun *r)
{
	return profd_live_is_live(r) ? r->run_id : NULL;
}

/* The record without samples, when profd forgot the run (it restarted). */
static int submit_instead(ProfdLiveRun *r, const char *json)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	int k;

	k = sd_bus_call_method(r->bus, BUS_NAME, MANAGER_PATH, MANAGER_INTERFACE, "SubmitRun", &error,
			       NULL, "s", json);
	return k < 0 ? k : -ENOENT;
}

int profd_live_finish(ProfdLiveRun *r, const RunProfile *record)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *json = NULL;
	int k;

	if (!profd_live_is_live(r))
		return 0;
	assert_return(record, -EINVAL);
	k = record_serialise(record, false, &json);
	if (k < 0)
		return k;
	k = sd_bus_message_new_method_call(r->bus, &m, BUS_NAME, MANAGER_PATH, MANAGER_INTERFACE,
					   "FinishRun");
	if (k >= 0)
		k = sd_bus_message_append(m, "ss", r->run_id, json);
	if (k >= 0)
		k = sd_bus_call(r->bus, m, FINISH_TIMEOUT_USEC, &error, &reply);
	if (k >= 0)
		return 0;
	if (sd_bus_error_has_name(&error, BUS_NAME ".Error.NoSuchRun"))
		return submit_instead(r, json);
	if (sd_bus_error_has_name(&error, BUS_NAME ".Error.RunEnded"))
		return -ESTALE;
	return k;
}

ProfdLiveRun *profd_live_free(ProfdLiveRun *r)
{
	if (!r)
		return NULL;
	if (r->ring) {
		pthread_mutex_lock(&ring_lock);
		if (current_ring == r->ring)
			current_ring = NULL;
		pthread_mutex_unlock(&ring_lock);
		replace_ring(r->ring, r->ring_size);
	}
	sd_bus_flush_close_unref(r->bus);
	free(r->run_id);
	free(r->status);
	free(r);
	return NULL;
}
