/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "process-resolvers.h"

#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "hash.h"
#include "shared-modules.h"
#include "target-files.h"

typedef struct ResolverSlot {
	uint32_t pid; /* 0: empty */
	bool deleted;
	StackResolver *resolver;
} ResolverSlot;

struct ProcessResolvers {
	StackResolverOptions options; /* .cache is the shared cache, .modules the shared modules */
	SymbolCache *own_cache;
	SharedModules *shared;        /* frame-pointer mode: one module per file for all */
	ModuleFinder finder;
	ResolverSlot *slots; /* open addressing, at most half full (deleted slots count) */
	size_t mask, used, count;
};

ProcessResolvers *process_resolvers_free(ProcessResolvers *r)
{
	if (!r)
		return NULL;
	for (size_t i = 0; r->slots && i <= r->mask; i++)
		stack_resolver_free(r->slots[i].resolver);
	free(r->slots);
	/* after the resolvers, which name through them */
	shared_modules_free(r->shared);
	symbol_cache_free(r->own_cache);
	free(r);
	return NULL;
}

void process_resolvers_freep(ProcessResolvers **r)
{
	process_resolvers_free(*r);
}

int process_resolvers_new(const StackResolverOptions *options, ProcessResolvers **ret)
{
	_cleanup_(process_resolvers_freep) ProcessResolvers *r = calloc(1, sizeof(*r));
	int k;

	if (!r)
		return -ENOMEM;
	/* a namespace pid belongs to one process, not to all of them */
	if (options->ns_pid)
		return -EINVAL;
	r->options = *options;
	if (!r->options.cache) {
		k = symbol_cache_new(&r->own_cache);
		if (k < 0)
			return k;
		r->options.cache = r->own_cache;
	}
	if (r->options.mode == STACK_UNWIND_FP && !r->options.modules) {
		k = shared_modules_new(r->options.files, r->options.cache, r->options.owner,
				       &r->shared);
		if (k < 0)
			return k;
		r->finder = (ModuleFinder){ shared_modules_find, r->shared };
		r->options.modules = &r->finder;
	}
	r->slots = calloc(64, sizeof(ResolverSlot));
	if (!r->slots)
		return -ENOMEM;
	r->mask = 63;
	*ret = TAKE_PTR(r);
	return 0;
}

/* The slot holding 'pid', or the first free one on its probe sequence. */
static ResolverSlot *slot_find(ProcessResolvers *r, uint32_t pid)
{
	ResolverSlot *free_slot = NULL;

	for (size_t i = hash_finalize(pid) & r->mask;; i = (i + 1) & r->mask) {
		ResolverSlot *s = &r->slots[i];

		if (s->pid == pid && !s->deleted)
			return s;
		if (s->deleted && !free_slot)
			free_slot = s;
		if (s->pid == 0 && !s->deleted)
			return free_slot ?: s;
	}
}

static int slots_grow(ProcessResolvers *r)
{
	ResolverSlot *old = r->slots;
	size_t old_size = r->mask + 1, size = r->count * 4 > old_size ? old_size * 2 : old_size;

	r->slots = calloc(size, sizeof(ResolverSlot));
	if (!r->slots) {
		r->slots = old;
		return -ENOMEM;
	}
	r->mask = size - 1;
	r->used = r->count;
	for (size_t i = 0; i < old_size; i++)
		if (old[i].pid != 0 && !old[i].deleted)
			*slot_find(r, old[i].pid) = old[i];
	free(old);
	return 0;
}

static int resolver_for(ProcessResolvers *r, uint32_t pid, StackResolver **ret)
{
	StackResolverOptions ro;
	ResolverSlot *s;
	int k;

	if (pid == 0)
		return -EINVAL;
	s = slot_find(r, pid);
	if (s->pid == pid && !s->deleted) {
		*ret = s->resolver;
		return 0;
	}
	if ((r->used + 1) * 2 > r->mask + 1) {
		k = slots_grow(r);
		if (k < 0)
			return k;
		s = slot_find(r, pid);
	}
	/* its perf map is named with the pid it knows itself by (containers) */
	ro = r->options;
	ro.ns_pid = target_namespace_pid(pid);
	k = stack_resolver_new(&ro, &s->resolver);
	if (k < 0)
		return k;
	if (!s->deleted)
		r->used++;
	s->pid = pid;
	s->deleted = false;
	r->count++;
	*ret = s->resolver;
	return 0;
}

int process_resolvers_resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			      Profile *profile, SampleStack *ret)
{
	ProcessResolvers *r = userdata;
	StackResolver *resolver;
	int k;

	k = resolver_for(r, sample->pid, &resolver);
	if (k < 0)
		return k;
	return stack_resolver_resolve(resolver, sample, maps, profile, ret);
}

void process_resolvers_forget(ProcessResolvers *r, uint32_t pid)
{
	ResolverSlot *s;

	if (pid == 0)
		return;
	s = slot_find(r, pid);
	if (s->pid != pid || s->deleted)
		return;
	s->resolver = stack_resolver_free(s->resolver);
	s->deleted = true;
	r->count--;
}

size_t process_resolvers_count(const ProcessResolvers *r)
{
	return r->count;
}
