/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stack-resolver.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "address-space.h"
#include "cleanup.h"
#include "default-resolver.h"
#include "dwarf-unwind.h"
#include "location-cache.h"
#include "perf-map.h"
#include "symbolize.h"

struct StackResolver {
	StackUnwindMode mode;
	bool kernel;
	uint32_t max_depth;
	char *perf_map_path; /* NULL: /tmp/perf-<pid>.map */
	SymbolCache *cache, *own_cache;
	AddressSpace *space;
	Unwinder *unwinder;
	LocationCache *locations;
	PerfMap *perf_map;
	const Profile *profile; /* the profile 'locations' holds ids of */

	pid_t pid;
	bool cache_state_known, warm;

	uint64_t *pcs;  /* max_depth lookup addresses */
	uint32_t *ids;  /* frame ids of one sample, leaf first */
	size_t ids_allocated;
};

int stack_unwind_mode_from_backend(const char *backend, StackUnwindMode *ret)
{
	if (!backend || strcmp(backend, "auto") == 0 || strcmp(backend, "perf-dwarf") == 0)
		*ret = STACK_UNWIND_DWARF;
	else if (strcmp(backend, "perf-fp") == 0 || strcmp(backend, "bpf") == 0)
		/* bpf stacks are the kernel's frame-pointer walk too */
		*ret = STACK_UNWIND_FP;
	else
		return -EINVAL;
	return 0;
}

StackResolver *stack_resolver_free(StackResolver *r)
{
	if (!r)
		return NULL;
	/* the Dwfl refers to the unwinder's callbacks: end it first */
	address_space_free(r->space);
	unwinder_free(r->unwinder);
	location_cache_free(r->locations);
	perf_map_free(r->perf_map);
	symbol_cache_free(r->own_cache);
	free(r->pcs);
	free(r->ids);
	free(r->perf_map_path);
	free(r);
	return NULL;
}

void stack_resolver_freep(StackResolver **r)
{
	stack_resolver_free(*r);
}

int stack_resolver_new(const StackResolverOptions *options, StackResolver **ret)
{
	_cleanup_(stack_resolver_freep) StackResolver *r = calloc(1, sizeof(*r));
	int k;

	if (!r)
		return -ENOMEM;
	if (options->mode != STACK_UNWIND_DWARF && options->mode != STACK_UNWIND_FP)
		return -EINVAL;
	r->mode = options->mode;
	r->kernel = options->kernel;
	r->max_depth = options->max_depth ?: STACK_RESOLVER_DEFAULT_MAX_DEPTH;
	if (options->perf_map_path) {
		r->perf_map_path = strdup(options->perf_map_path);
		if (!r->perf_map_path)
			return -ENOMEM;
	}
	r->cache = options->cache;
	if (!r->cache) {
		k = symbol_cache_new(&r->own_cache);
		if (k < 0)
			return k;
		r->cache = r->own_cache;
	}
	k = address_space_new(options->debuginfo_path, r->cache, &r->space);
	if (k < 0)
		return k;
	k = unwinder_new(r->space, &r->unwinder);
	if (k < 0)
		return k;
	k = location_cache_new(&r->locations);
	if (k < 0)
		return k;
	r->pcs = calloc(r->max_depth, sizeof(uint64_t));
	if (!r->pcs)
		return -ENOMEM;
	*ret = TAKE_PTR(r);
	return 0;
}

const char *stack_resolver_cache_state(const StackResolver *r)
{
	return r->warm ? "warm" : "cold";
}

/* Has an earlier session resolved the target's executable? Decided once, at the first sample. */
static void decide_cache_state(StackResolver *r, const ProcessMaps *maps)
{
	char link[32], exe[PATH_MAX];
	ModuleInfo *info = NULL;
	uint64_t addr = 0;
	ssize_t n;

	r->cache_state_known = true;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)r->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	for (size_t i = 0; i < maps->n_mappings; i++) {
		const ProcessMapping *m = &maps->mappings[i];

		if (!m->path || !(m->prot & PROT_EXEC))
			continue;
		/* the executable, or failing that the first mapped code file */
		if (strcmp(m->path, exe) == 0) {
			addr = m->start;
			break;
		}
		if (addr == 0 && m->path[0] == '/')
			addr = m->start;
	}
	if (addr && address_space_find(r->space, addr, &info))
		r->warm = symbol_cache_test_and_mark_module(r->cache, info->key);
}

static int reserve_ids(StackResolver *r, size_t n)
{
	size_t a;
	uint32_t *p;

	if (n <= r->ids_allocated)
		return 0;
	a = r->ids_allocated ? r->ids_allocated * 2 : 4 * (size_t)r->max_depth;
	while (a < n)
		a *= 2;
	p = reallocarray(r->ids, a, sizeof(uint32_t));
	if (!p)
		return -ENOMEM;
	r->ids = p;
	r->ids_allocated = a;
	return 0;
}

static int intern_or_none(Profile *p, const char *s, uint32_t *ret)
{
	if (!s) {
		*ret = PROFILE_NONE;
		return 0;
	}
	return profile_intern_string(p, s, ret);
}

/* Frames of a code address in a module libdwfl knows; -ENOENT when it has no name there. */
static int resolve_module_address(StackResolver *r, Profile *p, uint64_t addr, uint32_t *ids,
				  uint32_t *ret_n)
{
	const SymbolFrame *frames;
	ModuleInfo *info;
	uint32_t module, build_id;
	Dwfl_Module *mod;
	size_t n;
	int k;

	mod = address_space_find(r->space, addr, &info);
	if (!mod)
		return -ENOENT;
	k = symbolize_address(r->cache, mod, info, addr, &frames, &n);
	if (k < 0)
		return k;
	k = profile_intern_string(p, info->path, &module);
	if (k < 0)
		return k;
	k = intern_or_none(p, info->build_id, &build_id);
	if (k < 0)
		return k;
	for (size_t i = 0; i < n; i++) {
		ProfileFrame f = {
			.module = module,
			.build_id = build_id,
			.line = frames[i].line,
			.address = addr - info->bias,
			.inlined = frames[i].inlined,
		};

		k = profile_intern_string(p, frames[i].function, &f.function);
		if (k < 0)
			return k;
		k = intern_or_none(p, frames[i].file, &f.file);
		if (k < 0)
			return k;
		k = profile_intern_frame(p, &f, &ids[i]);
		if (k < 0)
			return k;
	}
	*ret_n = (uint32_t)n;
	return 0;
}

/* JIT code announced in /tmp/perf-<pid>.map. */
static int resolve_jit_address(StackResolver *r, Profile *p, uint64_t addr, uint32_t *ret_id)
{
	ProfileFrame f = { .file = PROFILE_NONE, .build_id = PROFILE_NONE, .address = addr };
	const char *name;
	int k;

	if (!r->perf_map) {
		k = perf_map_new(r->pid, r->perf_map_path, &r->perf_map);
		if (k < 0)
			return k;
	}
	k = perf_map_lookup(r->perf_map, addr, &name, NULL);
	if (k < 0)
		return k;
	k = profile_intern_string(p, name, &f.function);
	if (k < 0)
		return k;
	k = profile_intern_string(p, perf_map_name(r->perf_map), &f.module);
	if (k < 0)
		return k;
	return profile_intern_frame(p, &f, ret_id);
}

static int resolve_kernel_address(StackResolver *r, Profile *p, const ProcessMaps *maps,
				  uint64_t addr, uint32_t *ret_id)
{
	ProfileFrame f = {
		.file = PROFILE_NONE, .build_id = PROFILE_NONE, .address = addr, .kernel = true
	};
	const KernelSymbols *ks;
	const char *name, *module;
	int k;

	if (symbol_cache_kernel_symbols(r->cache, &ks) < 0 ||
	    kernel_symbols_lookup(ks, addr, &name, &module, NULL) < 0)
		return default_resolve_frame(NULL, p, maps, addr, true, ret_id);
	k = profile_intern_string(p, name, &f.function);
	if (k < 0)
		return k;
	k = profile_intern_string(p, module, &f.module);
	if (k < 0)
		return k;
	/* kallsyms names core kernel symbols with PROFILE_KERNEL_MODULE; modules are "[name]" */
	if (strcmp(module, PROFILE_KERNEL_MODULE) == 0) {
		k = intern_or_none(p, kernel_symbols_build_id(ks), &f.build_id);
		if (k < 0)
			return k;
	}
	return profile_intern_frame(p, &f, ret_id);
}

/* Append the frames of one lookup address to r->ids (at *n_ids), through the location cache. */
static int add_location(StackResolver *r, Profile *p, const ProcessMaps *maps, uint64_t addr,
			bool kernel, size_t *n_ids)
{
	const uint32_t *cached;
	uint32_t n = 0, *ids;
	bool cacheable = true;
	int k;

	if (location_cache_get(r->locations, addr, &cached, &n)) {
		k = reserve_ids(r, *n_ids + n);
		if (k < 0)
			return k;
		memcpy(r->ids + *n_ids, cached, n * sizeof(uint32_t));
		*n_ids += n;
		return 0;
	}
	k = reserve_ids(r, *n_ids + SYMBOLIZE_MAX_INLINE);
	if (k < 0)
		return k;
	ids = r->ids + *n_ids;
	if (kernel) {
		k = resolve_kernel_address(r, p, maps, addr, ids);
		n = 1;
	} else {
		k = resolve_module_address(r, p, addr, ids, &n);
		if (k == -ENOENT) {
			const ProcessMapping *m = process_maps_find(maps, addr);

			/* mapped but not ELF: JIT code, in anonymous memory or a memfd */
			n = 1;
			k = m ? resolve_jit_address(r, p, addr, ids) : -ENOENT;
			if (k == -ENOENT) {
				/*
				 * Unmapped is garbage from a broken walk: remember it. Code a JIT
				 * may announce later is asked about again next time.
				 */
				cacheable = !m || (m->path && m->path[0] == '/' &&
						   strncmp(m->path, "/memfd:", 7) != 0);
				k = default_resolve_frame(NULL, p, maps, addr, false, ids);
			}
		}
	}
	if (k < 0)
		return k;
	if (cacheable) {
		k = location_cache_put(r->locations, addr, ids, n);
		if (k < 0)
			return k;
	}
	*n_ids += n;
	return 0;
}

/* The callchain section after 'context' (PERF_CONTEXT_KERNEL/USER), up to the next marker. */
static size_t callchain_section(const PerfSample *s, uint64_t context, const uint64_t **ret)
{
	size_t i, j;

	for (i = 0; i < s->n_callchain && s->callchain[i] != context; i++)
		;
	if (i == s->n_callchain)
		return 0;
	for (j = i + 1; j < s->n_callchain && s->callchain[j] < PERF_CONTEXT_MAX; j++)
		;
	*ret = s->callchain + i + 1;
	return j - i - 1;
}

static int add_kernel_frames(StackResolver *r, Profile *p, const PerfSample *s,
			     const ProcessMaps *maps, size_t *n_ids)
{
	const uint64_t *chain;
	size_t n = callchain_section(s, PERF_CONTEXT_KERNEL, &chain);
	int k;

	if (n > r->max_depth)
		n = r->max_depth;
	for (size_t i = 0; i < n; i++) {
		k = add_location(r, p, maps, chain[i], true, n_ids);
		if (k < 0)
			return k;
	}
	return 0;
}

/* User lookup addresses: DWARF-unwound, or the frame-pointer callchain. */
static int collect_user_pcs(StackResolver *r, const PerfSample *s, size_t *ret_n, SampleStack *st)
{
	size_t max = r->max_depth, n;
	const uint64_t *chain;
	bool truncated = false;
	int k;

	/* without 64-bit user registers (kernel threads, 32-bit tasks): only the callchain */
	if (r->mode == STACK_UNWIND_DWARF && s->n_regs > 0 &&
	    s->regs_abi == PERF_SAMPLE_REGS_ABI_64) {
		k = unwind_sample(r->unwinder, s, r->pcs, max, &truncated);
		if (k < 0)
			return k;
		st->truncated = truncated;
		st->unwind_failed = truncated && k <= 1;
		*ret_n = (size_t)k;
		return 0;
	}
	n = callchain_section(s, PERF_CONTEXT_USER, &chain);
	if (n > max) {
		n = max;
		st->truncated = true;
	}
	/* after the first, entries are return addresses: look up the call itself */
	for (size_t i = 0; i < n; i++)
		r->pcs[i] = i == 0 ? chain[i] : chain[i] - 1;
	*ret_n = n;
	return 0;
}

int stack_resolver_resolve(void *userdata, const PerfSample *sample, const ProcessMaps *maps,
			   Profile *profile, SampleStack *ret)
{
	StackResolver *r = userdata;
	SampleStack st = { .stack = PROFILE_NONE };
	size_t n_ids = 0, n_pcs = 0;
	int k;

	if (r->pid == 0)
		r->pid = (pid_t)sample->pid;
	if (profile != r->profile) {
		location_cache_clear(r->locations);
		r->profile = profile;
	}
	k = address_space_update(r->space, maps);
	if (k < 0)
		return k;
	if (k > 0)
		location_cache_clear(r->locations);
	if (!r->cache_state_known)
		decide_cache_state(r, maps);

	if (r->kernel) {
		k = add_kernel_frames(r, profile, sample, maps, &n_ids);
		if (k < 0)
			return k;
	}
	k = collect_user_pcs(r, sample, &n_pcs, &st);
	if (k < 0)
		return k;
	for (size_t i = 0; i < n_pcs; i++) {
		k = add_location(r, profile, maps, r->pcs[i], false, &n_ids);
		if (k < 0)
			return k;
	}
	if (n_ids > 0) {
		k = profile_intern_stack_leaf_first(profile, r->ids, n_ids, &st.stack);
		if (k < 0)
			return k;
	}
	*ret = st;
	return 0;
}
