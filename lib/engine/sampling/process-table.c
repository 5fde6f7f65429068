/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "process-table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "id-table.h"
#include "task-list.h"

struct ProcessTable {
	TargetProcess **processes; /* in joining order */
	size_t n, allocated;
	IdTable by_pid;            /* ids: indices into processes */
	ProcessAdmitFn admit;
	void *admit_userdata;
};

static TargetProcess *target_process_free(TargetProcess *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_spaces; i++)
		process_maps_free(p->spaces[i]);
	free(p->spaces);
	free(p->threads);
	free(p);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(TargetProcess *, target_process_free);

ProcessTable *process_table_free(ProcessTable *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		target_process_free(t->processes[i]);
	free(t->processes);
	id_table_done(&t->by_pid);
	free(t);
	return NULL;
}

int process_table_new(ProcessTable **ret)
{
	ProcessTable *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	*ret = t;
	return 0;
}

void process_table_set_admit(ProcessTable *t, ProcessAdmitFn fn, void *userdata)
{
	t->admit = fn;
	t->admit_userdata = userdata;
}

/* The ids of the IdTable are indices into 'processes', keyed by pid. */
static uint64_t process_pid(const void *userdata, uint32_t id)
{
	const ProcessTable *t = userdata;

	return t->processes[id]->pid;
}

TargetProcess *process_table_find(const ProcessTable *t, uint32_t pid)
{
	uint32_t slot;

	if (!id_table_find_key(&t->by_pid, pid, process_pid, t, &slot))
		return NULL;
	return t->processes[t->by_pid.slots[slot]];
}

/* Insert 'p' (its pid not in the table yet); the table owns it afterwards. */
static int table_insert(ProcessTable *t, TargetProcess *p)
{
	int r;

	if (t->n >= UINT32_MAX - 1)
		return -ENOSPC;
	r = ARRAY_RESERVE(t->processes, t->allocated, t->n + 1, 64);
	if (r >= 0)
		r = id_table_reserve_keys(&t->by_pid, 1, process_pid, t);
	if (r < 0)
		return r;
	t->processes[t->n] = p;
	id_table_insert(&t->by_pid, id_table_empty_slot_key(&t->by_pid, p->pid), (uint32_t)t->n);
	t->n++;
	return 0;
}

/* Add address space 'm' (taken, even on failure). */
static int process_push_space(TargetProcess *p, ProcessMaps *m)
{
	if (ARRAY_RESERVE(p->spaces, p->spaces_allocated, p->n_spaces + 1, 2) < 0) {
		process_maps_free(m);
		return -ENOMEM;
	}
	p->spaces[p->n_spaces++] = m;
	return 0;
}

static void process_admit(ProcessTable *t, TargetProcess *p)
{
	if (t->admit && !p->excluded)
		p->excluded = !t->admit(t->admit_userdata, p->pid);
}

static void copy_comm(char dst[static 16], const char *comm)
{
	size_t n = strnlen(comm, 15);

	memcpy(dst, comm, n);
	dst[n] = '\0';
}

const char *target_process_thread_name(const TargetProcess *p, uint32_t tid)
{
	for (size_t i = 0; i < p->n_threads; i++)
		if (p->threads[i].tid == tid)
			return p->threads[i].comm;
	return NULL;
}

static int set_thread_name(TargetProcess *p, uint32_t tid, const char *comm)
{
	for (size_t i = 0; i < p->n_threads; i++)
		if (p->threads[i].tid == tid) {
			copy_comm(p->threads[i].comm, comm);
			return 0;
		}
	if (ARRAY_RESERVE(p->threads, p->threads_allocated, p->n_threads + 1, 4) < 0)
		return -ENOMEM;
	p->threads[p->n_threads].tid = tid;
	copy_comm(p->threads[p->n_threads++].comm, comm);
	return 0;
}

/* A new process with one address space: 'maps' (taken), or an empty one. */
static int process_new(uint32_t pid, ProcessMaps *maps, TargetProcess **ret)
{
	_cleanup_(target_process_freep) TargetProcess *p = calloc(1, sizeof(*p));
	int r;

	if (!p) {
		process_maps_free(maps);
		return -ENOMEM;
	}
	p->pid = pid;
	if (!maps) {
		r = process_maps_new(pid, &maps);
		if (r < 0)
			return r;
	}
	r = process_push_space(p, maps);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}

int process_table_get(ProcessTable *t, uint32_t pid, TargetProcess **ret)
{
	_cleanup_(target_process_freep) TargetProcess *p = NULL;
	TargetProcess *known = process_table_find(t, pid);
	ProcessMaps *maps = NULL;
	char comm[16];
	int r;

	if (known) {
		*ret = known;
		return 0;
	}
	/* gone, not ours to read, or changing under us: it joins without mappings */
	r = process_maps_load(pid, &maps);
	if (r == -ENOMEM)
		return r;
	r = process_new(pid, r < 0 ? NULL : maps, &p);
	if (r < 0)
		return r;
	if (task_read_comm((pid_t)pid, (pid_t)pid, comm) >= 0)
		copy_comm(p->comm, comm);
	else if (!maps)
		p->exited = true;
	process_admit(t, p);
	r = table_insert(t, p);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}

ProcessMapping process_mapping_from_mmap2(const PerfRecordMmap2 *m)
{
	return (ProcessMapping){
		.start = m->addr,
		.end = m->addr + m->len,
		.pgoff = m->pgoff,
		.inode = m->ino,
		.dev_major = m->maj,
		.dev_minor = m->min,
		.prot = m->prot,
		.path = m->filename && m->filename[0] ? (char *)m->filename : NULL,
	};
}

int process_maps_apply_mmap2(ProcessMaps *maps, const PerfRecordMmap2 *m)
{
	ProcessMapping mapping = process_mapping_from_mmap2(m);

	if (m->len == 0 || mapping.end < mapping.start)
		return 0;
	return process_maps_add(maps, &mapping);
}

static int apply_mmap2(ProcessTable *t, const PerfRecordMmap2 *m)
{
	TargetProcess *p;
	int r;

	r = process_table_get(t, m->pid, &p);
	if (r < 0)
		return r;
	return process_maps_apply_mmap2(p->spaces[p->n_spaces - 1], m);
}

static int apply_comm(ProcessTable *t, const PerfRecordComm *c)
{
	TargetProcess *p = process_table_find(t, c->pid);
	ProcessMaps *maps = NULL;
	int r;

	if (!p) {
		/*
		 * joining from /proc gives the new image's maps already; the name is the
		 * record's all the same (a reader without /proc, the sandboxed unwinder,
		 * has no other)
		 */
		r = process_table_get(t, c->pid, &p);
		if (r < 0)
			return r;
	} else if (c->exec) {
		/* exec replaced the address space; its new mappings follow as MMAP2 records */
		r = process_maps_new(c->pid, &maps);
		if (r < 0)
			return r;
		r = process_push_space(p, maps);
		if (r < 0)
			return r;
		/* credentials may change at exec (setuid): ask again */
		process_admit(t, p);
	}
	if (c->pid == c->tid)
		copy_comm(p->comm, c->comm);
	return set_thread_name(p, c->tid, c->comm);
}

static int apply_fork(ProcessTable *t, const PerfRecordTask *f)
{
	TargetProcess *parent, *child = NULL;
	ProcessMaps *maps = NULL;
	int r;

	/* a new thread shares its process's address space, and starts with its creator's name */
	if (f->pid != f->tid) {
		TargetProcess *p = process_table_find(t, f->pid);
		const char *creator = p ? target_process_thread_name(p, f->ptid) : NULL;
		char comm[16];

		if (!creator)
			return 0;
		copy_comm(comm, creator); /* the list may move when it grows */
		return set_thread_name(p, f->tid, comm);
	}
	if (f->pid == f->ppid || process_table_find(t, f->pid))
		return 0;
	parent = process_table_find(t, f->ppid);
	if (!parent)
		return process_table_get(t, f->pid, &child);
	r = process_maps_clone(parent->spaces[parent->n_spaces - 1], f->pid, &maps);
	if (r < 0)
		return r;
	r = process_new(f->pid, maps, &child);
	if (r < 0)
		return r;
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	child->excluded = parent->excluded;
	process_admit(t, child);
	r = table_insert(t, child);
	if (r < 0)
		target_process_free(child);
	return r;
}

int process_table_apply(ProcessTable *t, const PerfRecord *rec)
{
	TargetProcess *p;

	switch (rec->type) {
	case PERF_RECORD_MMAP2:
		return apply_mmap2(t, &rec->mmap2);
	case PERF_RECORD_COMM:
		return apply_comm(t, &rec->comm);
	case PERF_RECORD_FORK:
		return apply_fork(t, &rec->task);
	case PERF_RECORD_EXIT:
		p = process_table_find(t, rec->task.pid);
		if (p && rec->task.pid == rec->task.tid)
			p->exited = true;
		return 0;
	default:
		return 0;
	}
}

const ProcessMapping *process_table_find_mapping(const ProcessTable *t, uint32_t pid,
						 uint64_t address)
{
	const TargetProcess *p = process_table_find(t, pid);

	for (size_t i = p ? p->n_spaces : 0; i > 0; i--) {
		const ProcessMapping *m = process_maps_find(p->spaces[i - 1], address);

		if (m && m->path && m->path[0] == '/')
			return m;
	}
	return NULL;
}

const ProcessMapping *process_table_find_file(const ProcessTable *t, uint32_t dev_major,
					      uint32_t dev_minor, uint64_t inode, uint32_t *ret_pid)
{
	for (size_t i = 0; i < t->n; i++) {
		const TargetProcess *p = t->processes[i];

		for (size_t j = 0; !p->excluded && j < p->n_spaces; j++) {
			const ProcessMaps *maps = p->spaces[j];

			for (size_t k = 0; k < maps->n_mappings; k++) {
				const ProcessMapping *m = &maps->mappings[k];

				if (m->inode == inode && m->dev_major == dev_major &&
				    m->dev_minor == dev_minor && m->path && m->path[0] == '/') {
					*ret_pid = p->pid;
					return m;
				}
			}
		}
	}
	return NULL;
}

const ProcessMaps *target_process_space(const TargetProcess *p, uint32_t exec_gen)
{
	return p->spaces[exec_gen < p->n_spaces ? exec_gen : p->n_spaces - 1];
}

size_t process_table_size(const ProcessTable *t)
{
	return t->n;
}

TargetProcess *process_table_at(const ProcessTable *t, size_t i)
{
	return i < t->n ? t->processes[i] : NULL;
}
