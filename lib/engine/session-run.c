/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-run.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "hash.h"
#include "hex.h"
#include "perf-event.h"
#include "task-list.h"

#define SESSION_RUN_VERSION "profd " PROFD_VERSION

DEFINE_TRIVIAL_CLEANUP_FUNC(Elf *, elf_end);

int session_run_build_id(pid_t pid, char **ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_(elf_endp) Elf *elf = NULL;
	const void *id = NULL;
	char path[64];
	ssize_t n;
	char *hex;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EBADMSG;
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n <= 0)
		return n < 0 ? -EBADMSG : -ENODATA;
	hex = malloc(HEX_ENCODED_SIZE((size_t)n));
	if (!hex)
		return -ENOMEM;
	*ret = hex_encode(id, (size_t)n, hex);
	return 0;
}

int session_run_config_digest(const SamplingOptions *requested, const SamplingMetrics *m,
			      char **ret)
{
	_cleanup_free_ char *line = NULL;
	uint64_t capacity = requested->sample_budget, limit = requested->sample_budget_limit;
	size_t n_cpus = 1;
	char budget[48];
	/* the copy is learned per program (adaptive stack copy): the setting is its ceiling */
	uint32_t stack_bytes = m->stack_bytes == 0 ? 0 :
		((m->requested_stack_bytes ?: SAMPLING_DEFAULT_STACK_BYTES) + 7) & ~7U;

	/*
	 * The default budget follows the target's threads: its policy is the setting,
	 * and the limit only when it can bind (below the budget of every CPU busy).
	 */
	(void)perf_online_cpu_count(&n_cpus);
	if (capacity == 0 && (limit == 0 || limit >= sampling_default_budget(m->hz,
			      m->effective_duration_nanos, n_cpus, n_cpus)))
		snprintf(budget, sizeof(budget), "auto");
	else if (capacity == 0)
		snprintf(budget, sizeof(budget), "auto<=%" PRIu64, limit);
	else
		snprintf(budget, sizeof(budget), "%" PRIu64,
			 limit > 0 && capacity > limit ? limit : capacity);
	if (asprintf(&line,
		     "hz=%" PRIu32 " duration_nanos=%" PRIu64 " backend=%s event=%s kernel=%d "
		     "stack_bytes=%" PRIu32 " ring_capacity=%s",
		     m->hz, m->effective_duration_nanos, m->backend ?: "", m->event ?: "",
		     !requested->exclude_kernel, stack_bytes, budget) < 0)
		return -ENOMEM;
	if (asprintf(ret, "%016" PRIx64, hash_fnv1a(HASH_FNV1A_BASIS, line, strlen(line))) < 0)
		return -ENOMEM;
	return 0;
}

/* The identity and recorder of a cgroup, unit or the whole machine. */
static int begin_many(const SessionRunOptions *o, RunIdentity *identity, RunRecorder **ret)
{
	const SamplingTarget *t = o->target;
	bool cgroup = t->kind == SAMPLING_TARGET_CGROUP;
	int k;

	/* many executables: none of them is the detector */
	k = run_identity_new(SESSION_RUN_VERSION, "none", "",
			     t->unit ? "unit" : sampling_target_kind_to_string(t->kind),
			     o->workload_class ?: t->unit ?: cgroup ? t->cgroup : "system",
			     o->backend_requested ?: "auto", identity);
	if (k < 0)
		return k;
	identity->daemon_state = o->daemon_state;
	return run_recorder_new_cgroup(cgroup ? t->cgroup_fd : -1, identity, ret);
}

int session_run_begin(pid_t pid, const SessionRunOptions *o, RunRecorder **ret)
{
	_cleanup_(run_recorder_freep) RunRecorder *r = NULL;
	_cleanup_free_ char *build_id = NULL;
	RunIdentity identity = {};
	char comm[16] = "";
	int k;

	if (o->target && sampling_target_is_multi_process(o->target)) {
		k = begin_many(o, &identity, &r);
		run_identity_done(&identity);
		if (k >= 0)
			k = run_recorder_transition(r, RUN_STATE_ACQUIRING);
		if (k < 0)
			return k;
		*ret = TAKE_PTR(r);
		return 0;
	}
	k = session_run_build_id(pid, &build_id);
	if (k == -ENOMEM || k == -ESRCH)
		return k;
	if (!o->comm && !o->workload_class && task_read_comm(pid, pid, comm) < 0)
		return -ESRCH;
	/* config_digest is known once sampling runs (session_run_sampling) */
	k = run_identity_new(SESSION_RUN_VERSION, build_id ?: "none", "", "pid",
			     o->workload_class ?: o->comm ?: comm, o->backend_requested ?: "auto",
			     &identity);
	if (k < 0)
		return k;
	identity.daemon_state = o->daemon_state;
	k = run_recorder_new(pid, &identity, &r);
	run_identity_done(&identity);
	if (k < 0)
		return k;
	k = run_recorder_transition(r, RUN_STATE_ACQUIRING);
	if (k < 0)
		return k;
	*ret = TAKE_PTR(r);
	return 0;
}

int session_run_sampling(RunRecorder *r, const SamplingOptions *requested, const SamplingMetrics *m)
{
	RunIdentity *id = run_recorder_identity(r);
	_cleanup_free_ char *digest = NULL;
	int k;

	k = session_run_config_digest(requested, m, &digest);
	if (k < 0)
		return k;
	k = run_identity_set_string(&id->config_digest, digest);
	if (k < 0)
		return k;
	k = run_identity_set_string(&id->backend_selected, m->backend);
	if (k < 0)
		return k;
	return run_recorder_transition(r, RUN_STATE_SCANNING);
}

int session_run_resolving(RunRecorder *r, const SamplingMetrics *m, const char *cache_state)
{
	RunIdentity *id = run_recorder_identity(r);
	int state = cache_state ? cache_state_from_string(cache_state) : -EINVAL;

	/* the threads the target ran: at most at once during the window (a command has one at its start) */
	id->scanner_threads = m->threads_peak > m->threads_at_start ? m->threads_peak
								   : m->threads_at_start;
	if (state >= 0)
		id->cache_state = (CacheState)state;
	run_recorder_set_input(r, m->ring_bytes, m->samples_captured);
	return run_recorder_transition(r, RUN_STATE_RESOLVING);
}

int session_run_add_stack_quality(RunProfile *record, json_t *quality)
{
	json_t *profd;

	if (!quality)
		return 0;
	if (!record->extra && !(record->extra = json_object()))
		return -ENOMEM;
	profd = json_object_get(record->extra, "profd");
	if (!json_is_object(profd) &&
	    (!(profd = json_object()) || json_object_set_new(record->extra, "profd", profd) < 0))
		return -ENOMEM;
	return json_object_set(profd, "stack_quality", quality) < 0 ? -ENOMEM : 0;
}
