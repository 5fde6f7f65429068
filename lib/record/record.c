/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The record model: identities, freeing and equality (by the field tables). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "record-fields.h"
#include "record.h"
#include "time-util.h"

static atomic_uint_fast64_t run_sequence;

/* Decimal digits of a u128 into buf (at least 40 bytes). */
static void format_u128(unsigned __int128 v, char *buf)
{
	char tmp[40];
	size_t n = 0;

	do {
		tmp[n++] = (char) ('0' + (int) (v % 10));
		v /= 10;
	} while (v > 0);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
}

/* The CPUs this process may run on, as Rust's available_parallelism(). */
static uint64_t logical_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (uint64_t) CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint64_t) n : 1;
}

int run_identity_set_string(char **field, const char *value)
{
	char *copy = NULL;

	if (value) {
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
	}
	free(*field);
	*field = copy;
	return 0;
}

int run_identity_new(const char *binary_version,
		     const char *detector_digest,
		     const char *config_digest,
		     const char *source_kind,
		     const char *workload_class,
		     const char *backend_requested,
		     RunIdentity *ret)
{
	RunIdentity id = {
		.cache_state = CACHE_STATE_UNKNOWN,
		.daemon_state = DAEMON_STATE_OFF,
		.logical_cpus = logical_cpus(),
	};
	const char *values[] = { binary_version, detector_digest, config_digest,
				 source_kind,    workload_class,  backend_requested };
	char **fields[] = { &id.binary_version, &id.detector_digest, &id.config_digest,
			    &id.source_kind,    &id.workload_class,  &id.backend_requested };
	char unix_ns[40];
	uint64_t sequence;

	for (size_t i = 0; i < ELEMENTSOF(values); i++)
		if (!values[i])
			return -EINVAL;

	sequence = atomic_fetch_add_explicit(&run_sequence, 1, memory_order_relaxed);
	format_u128(clock_nanos(CLOCK_REALTIME), unix_ns);
	if (asprintf(&id.run_id, "%d-%s-%" PRIu64, (int) getpid(), unix_ns, sequence) < 0) {
		id.run_id = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < ELEMENTSOF(values); i++)
		if (run_identity_set_string(fields[i], values[i]) < 0) {
			run_identity_done(&id);
			return -ENOMEM;
		}
	*ret = id;
	return 0;
}

void run_identity_done(RunIdentity *id)
{
	struct_fields_done(&run_identity_fields, id);
}

RunProfile *run_profile_free(RunProfile *p)
{
	if (!p)
		return NULL;
	struct_fields_done(&run_profile_fields, p);
	free(p);
	return NULL;
}

void run_profile_freep(RunProfile **p)
{
	*p = run_profile_free(*p);
}

bool run_profile_equal(const RunProfile *a, const RunProfile *b)
{
	if (!a || !b)
		return !a && !b;
	return struct_fields_equal(&run_profile_fields, a, b);
}
