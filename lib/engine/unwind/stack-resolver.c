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
#include "array.h"
#include "cleanup.h"
#include "default-resolver.h"
#include "dwarf-unwind.h"
#include "hybrid-unwind.h"
#include "jitdump.h"
#include "location-cache.h"
#include "perf-map.h"
#include "stack-quality.h"
#include "symbolize.h"

_Static_assert(ELEMENTSOF(((StackResolverStats *)0)->ends) == _UNWIND_END_MAX,
	       "one counter per UnwindEnd");

/* Unnamed JIT frames remembered for stack_resolver_finish(), at most. */
#define UNNAMED_JIT_MAX 65536U

struct StackResolver {
	StackUnwindMode mode;
	bool kernel;
	uint32_t max_depth;
	const TargetFileOpener *files;
	uint32_t ns_pid;
	SymbolCache *cache, *own_cache;
	AddressSpace *space;
	const ModuleFinder *modules; /* NULL: space */
	uint64_t maps_generation;    /* of r->maps (shared modules: when locations were cached) */
	Unwinder *unwinder;
	LocationCache *locations;
	PerfMap *perf_map;
	JitDump *jitdump;
	uint64_t jitdump_generation; /* of the maps last searched for a jitdump file */
	uint64_t sample_time;        /* of the sample being resolved */
	StackResolverStats stats;
	StackQuality *quality;
	bool finished;               /* stack_resolver_finish() ran */
	uint32_t *frame_module;      /* per profile frame: 1 + quality module when unnamed, or 0 */
	size_t frame_module_allocated;
	uint32_t *unnamed_jit;       /* frame ids of JIT code nothing named yet (repeats) */
	size_t n_unnamed_jit, unnamed_jit_allocated;
	Profile *profile;       /* the profile 'locations' holds ids of */
	const ProcessMaps *maps; /* the target's, as of the last sample */
	uint64_t profile_generation; /* counts profiles served, from 1 */

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
	jitdump_free(r->jitdump);
	free(r->unnamed_jit);
	free(r->frame_module);
	stack_quality_free(r->quality);
	symbol_cache_free(r->own_cache);
	free(r->pcs);
	free(r->ids);
	free(r);
	return NULL;
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
	r->files = options->files ?: &target_file_opener_default;
	r->ns_pid = options->ns_pid;
	r->cache = options->cache;
	if (!r->cache) {
		k = symbol_cache_new(&r->own_cache);
		if (k < 0)
			return k;
		r->cache = r->own_cache;
	}
	/* shared modules name frame-pointer stacks; DWARF unwinding needs the process's own */
	if (options->modules && options->mode != STACK_UNWIND_FP)
		return -EINVAL;
	r->modules = options->modules;
	k = address_space_new(r->files, r->cache, options->owner, &r->space);
	if (k < 0)
		return k;
	k = unwinder_new(r->space, &r->unwinder);
	if (k < 0)
		return k;
	k = location_cache_new(&r->locations);
	if (k < 0)
		return k;
	k = stack_quality_new(&r->quality);
	if (k < 0)
		return k;
	r->pcs = calloc(r->max_depth, sizeof(uint64_t));
	if (!r->pcs)
		return -ENOMEM;
	*ret = TAKE_PTR(r);
	return 0;
}

void stack_resolver_get_stats(const StackResolver *r, StackResolverStats *ret)
{
	*ret = r->stats;
}

const char *stack_resolver_cache_state(const StackResolver *r)
{
	return r->warm ? "warm" : "cold";
}

uint32_t stack_resolver_stack_bytes_needed(const StackResolver *r, uint32_t copied, uint32_t ceiling)
{
	UnwinderStats stats;

	if (!r->unwinder)
		return 0;
	unwinder_get_stats(r->unwinder, &stats);
	return unwind_suggest_stack_bytes(&stats, copied, ceiling);
}

/* The module holding 'addr', and the address as that module knows it (*ret_addr). */
static Dwfl_Module *find_module(StackResolver *r, uint64_t addr, ModuleInfo **ret_info,
				uint64_t *ret_addr)
{
	if (r->modules)
		return r->modules->find(r->modules->userdata, r->maps, addr, ret_info, ret_addr);
	*ret_addr = address_space_translate(r->space, addr);
	return address_space_find(r->space, *ret_addr, ret_info);
}

/*
 * Has an earlier session resolved the target's executable? Decided once, at
 * the first sample. The executable is the lowest mapped code file (PIE and
 * non-PIE executables load below the mmap area), so no /proc access is needed.
 */
static void decide_cache_state(StackResolver *r, const ProcessMaps *maps)
{
	ModuleInfo *info = NULL;
	uint64_t addr;

	r->cache_state_known = true;
	for (size_t i = 0; i < maps->n_mappings; i++) {
		const ProcessMapping *m = &maps->mappings[i];

		if (!target_mapping_has_file(m) || !(m->prot & PROT_EXEC))
			continue;
		if (find_module(r, m->start, &info, &addr))
			r->warm = symbol_module_test_and_mark_seen(info->module);
		return;
	}
}

static int reserve_ids(StackResolver *r, size_t n)
{
	return ARRAY_RESERVE(r->ids, r->ids_allocated, n, 4 * (size_t)r->max_depth);
}

/* The lowest mapped code file: the executable (PIE and non-PIE ones load below the mmap area). */
static const ProcessMapping *main_executable(const ProcessMaps *maps)
{
	for (size_t i = 0; i < maps->n_mappings; i++) {
		const ProcessMapping *m = &maps->mappings[i];

		if (target_mapping_has_file(m) && (m->prot & PROT_EXEC))
			return m;
	}
	return NULL;
}

/* Tell the profile where a module's file is mapped (once per module and profile). */
static int add_module_mapping(StackResolver *r, Profile *p, const ProcessMaps *maps,
			      ModuleInfo *info, uint32_t module, uint32_t build_id)
{
	const ProcessMapping *exe;
	ProfileMapping m = {
		.module = module,
		.build_id = build_id,
		.start = info->map_start,
		.limit = info->map_limit,
		.offset = info->map_offset,
		.bias = info->bias,
	};

	if (info->mapped_for == r->profile_generation)
		return 0;
	exe = main_executable(maps);
	m.main = exe && exe->start == info->map_start;
	info->mapped_for = r->profile_generation;
	return profile_add_mapping(p, &m);
}

/*
 * Frames of a code address in a module libdwfl knows; -ENOENT when it has no
 * name there (*ret_info and *ret_addr then still say which module it is in,
 * and where in it).
 */
static int resolve_module_address(StackResolver *r, Profile *p, const ProcessMaps *maps,
				  uint64_t addr, uint32_t *ids, uint32_t *ret_n,
				  ModuleInfo **ret_info, uint64_t *ret_addr)
{
	const SymbolFrame *frames;
	ModuleInfo *info;
	uint32_t module, build_id;
	Dwfl_Module *mod;
	size_t n;
	int k;

	mod = find_module(r, addr, &info, &addr);
	if (!mod)
		return -ENOENT;
	*ret_info = info;
	*ret_addr = addr;
	k = symbolize_address(mod, info, addr, &frames, &n);
	if (k < 0)
		return k;
	k = profile_intern_string(p, info->path, &module);
	if (k < 0)
		return k;
	k = profile_intern_string_or_none(p, info->build_id, &build_id);
	if (k < 0)
		return k;
	k = add_module_mapping(r, p, maps, info, module, build_id);
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
		k = profile_intern_string_or_none(p, frames[i].file, &f.file);
		if (k < 0)
			return k;
		k = profile_intern_frame(p, &f, &ids[i]);
		if (k < 0)
			return k;
	}
	*ret_n = (uint32_t)n;
	return 0;
}

static const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* A frame's function and module names, interned into the profile. */
static int name_frame(Profile *p, const char *function, const char *module, ProfileFrame *f)
{
	int k;

	k = profile_intern_string(p, function, &f->function);
	if (k < 0)
		return k;
	return profile_intern_string(p, module, &f->module);
}

/* A frame nothing names: function "file+0xADDRESS" (f->address), module the file's path. */
static int name_by_offset(Profile *p, const char *path, ProfileFrame *f)
{
	char name[256];

	snprintf(name, sizeof(name), "%s+0x%" PRIx64, path_basename(path), f->address);
	return name_frame(p, name, path, f);
}

/*
 * An address nothing names, in a module: "module+0xADDR" at its ELF address
 * (what addr2line and pprof take), with the module's build-id and mapping.
 * 'addr' is the address as the module knows it.
 */
static int unnamed_module_frame(StackResolver *r, Profile *p, const ProcessMaps *maps,
				ModuleInfo *info, uint64_t addr, uint32_t *ret_id)
{
	ProfileFrame f = { .file = PROFILE_NONE, .address = addr - info->bias };
	int k;

	k = name_by_offset(p, info->path, &f);
	if (k < 0)
		return k;
	k = profile_intern_string_or_none(p, info->build_id, &f.build_id);
	if (k < 0)
		return k;
	k = add_module_mapping(r, p, maps, info, f.module, f.build_id);
	if (k < 0)
		return k;
	return profile_intern_frame(p, &f, ret_id);
}

/* Code in a mapped file that is no ELF module: "file+0xOFFSET" at its file offset. */
static int unnamed_file_frame(Profile *p, const ProcessMapping *m, uint64_t addr,
			      uint32_t *ret_id)
{
	ProfileFrame f = {
		.file = PROFILE_NONE, .build_id = PROFILE_NONE, .address = addr - m->start + m->pgoff
	};
	ProfileMapping mapping = {
		.build_id = PROFILE_NONE,
		.start = m->start,
		.limit = m->end,
		.offset = m->pgoff,
		.bias = m->start - m->pgoff,
	};
	int k;

	k = name_by_offset(p, m->path, &f);
	if (k < 0)
		return k;
	mapping.module = f.module;
	k = profile_add_mapping(p, &mapping);
	if (k < 0)
		return k;
	return profile_intern_frame(p, &f, ret_id);
}

/* The target's jitdump file, once it maps one (looked for again when its mappings change). */
static JitDump *find_jitdump(StackResolver *r, const ProcessMaps *maps)
{
	const ProcessMapping *m;

	if (r->jitdump || r->jitdump_generation == maps->generation)
		return r->jitdump;
	r->jitdump_generation = maps->generation;
	m = jitdump_find_mapping(maps);
	if (m && jitdump_open(r->files, (uint32_t)r->pid, m, &r->jitdump) < 0)
		r->jitdump = NULL;
	return r->jitdump;
}

/*
 * JIT code: named by the jitdump file for the sample's time, or by
 * /tmp/perf-<pid>.map. *ret_timed: the name holds for this sample's time only.
 */
static int resolve_jit_address(StackResolver *r, Profile *p, const ProcessMaps *maps,
			       uint64_t addr, uint32_t *ret_id, bool *ret_timed)
{
	ProfileFrame f = { .file = PROFILE_NONE, .build_id = PROFILE_NONE, .address = addr };
	JitDump *jitdump = find_jitdump(r, maps);
	const char *name, *module;
	int k = -ENOENT;

	*ret_timed = false;
	if (jitdump) {
		k = jitdump_lookup(jitdump, addr, r->sample_time, &name, NULL);
		module = jitdump_path(jitdump);
		*ret_timed = k >= 0;
	}
	if (k == -ENOENT) {
		if (!r->perf_map) {
			k = perf_map_new(r->files, (uint32_t)r->pid, r->ns_pid, &r->perf_map);
			if (k < 0)
				return k;
		}
		k = perf_map_lookup(r->perf_map, addr, &name, NULL);
		module = perf_map_name(r->perf_map);
	}
	if (k < 0)
		return k;
	k = name_frame(p, name, module, &f);
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

	if (symbol_cache_kernel_symbols(r->cache, r->files, &ks) < 0 ||
	    kernel_symbols_lookup(ks, addr, &name, &module, NULL) < 0)
		return default_resolve_frame(NULL, p, maps, addr, true, ret_id);
	k = name_frame(p, name, module, &f);
	if (k < 0)
		return k;
	/* kallsyms names core kernel symbols with PROFILE_KERNEL_MODULE; modules are "[name]" */
	if (strcmp(module, PROFILE_KERNEL_MODULE) == 0) {
		k = profile_intern_string_or_none(p, kernel_symbols_build_id(ks), &f.build_id);
		if (k < 0)
			return k;
	}
	return profile_intern_frame(p, &f, ret_id);
}

/* Frame 'frame' is unnamed code of 'module': counted in the stack-quality report at the end. */
static int mark_unnamed(StackResolver *r, uint32_t frame, const char *module, const char *build_id)
{
	uint32_t index;
	int k;

	if (frame >= r->frame_module_allocated) {
		size_t n = r->frame_module_allocated ? r->frame_module_allocated : 1024;
		uint32_t *a;

		while (n <= frame)
			n *= 2;
		a = reallocarray(r->frame_module, n, sizeof(uint32_t));
		if (!a)
			return -ENOMEM;
		memset(a + r->frame_module_allocated, 0,
		       (n - r->frame_module_allocated) * sizeof(uint32_t));
		r->frame_module = a;
		r->frame_module_allocated = n;
	}
	k = stack_quality_module(r->quality, module, build_id, &index);
	if (k < 0)
		return k;
	r->frame_module[frame] = index + 1;
	return 0;
}

/* JIT frames to name at the end; a bounded list (a JIT without any map would fill it). */
static int remember_unnamed_jit(StackResolver *r, uint32_t frame)
{
	int k;

	if (r->n_unnamed_jit >= UNNAMED_JIT_MAX)
		return 0;
	k = ARRAY_RESERVE(r->unnamed_jit, r->unnamed_jit_allocated, r->n_unnamed_jit + 1, 64);
	if (k < 0)
		return k;
	r->unnamed_jit[r->n_unnamed_jit++] = frame;
	return 0;
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
		ModuleInfo *info = NULL;
		uint64_t module_addr = addr;

		/* the naming chain: DWARF, .symtab, .dynsym of the module; JIT maps; module+offset */
		k = resolve_module_address(r, p, maps, addr, ids, &n, &info, &module_addr);
		if (k == -ENOENT) {
			const ProcessMapping *m = process_maps_find(maps, addr);

			bool timed = false;

			n = 1;
			k = m ? resolve_jit_address(r, p, maps, addr, ids, &timed) : -ENOENT;
			/* code a JIT reuses has other names at other times */
			cacheable = !timed;
			if (k == -ENOENT) {
				/*
				 * Unmapped is garbage from a broken walk: remember it. Code a JIT
				 * may announce later is asked about again next time.
				 */
				cacheable = !m || (target_mapping_has_file(m) &&
						   strncmp(m->path, "/memfd:", 7) != 0);
				if (info)
					k = unnamed_module_frame(r, p, maps, info, module_addr, ids);
				else if (m && target_mapping_has_file(m))
					k = unnamed_file_frame(p, m, addr, ids);
				else {
					k = default_resolve_frame(NULL, p, maps, addr, false, ids);
					/* JIT code: its records may be written out later */
					if (k >= 0 && m && (m->prot & PROT_EXEC))
						k = remember_unnamed_jit(r, ids[0]);
				}
				/*
				 * The vDSO's local functions have no symbol and no package gives
				 * one (perf shows their addresses too): not a defect to report
				 */
				if (k >= 0 && !(info && mapping_path_is_vdso(info->path)))
					k = mark_unnamed(r, ids[0],
							 info ? info->path
							      : m && target_mapping_has_file(m)
								  ? m->path
								  : STACK_QUALITY_ANONYMOUS,
							 info ? info->build_id : NULL);
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

static int add_kernel_frames(StackResolver *r, Profile *p, const PerfSample *s,
			     const ProcessMaps *maps, size_t *n_ids)
{
	const uint64_t *chain;
	size_t n = sample_callchain_section(s, PERF_CONTEXT_KERNEL, &chain);
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

/*
 * About the stack a copy would have had to hold for a walk that ran out of
 * it, when the callchain finished the stack: the copy's share of the frames
 * tells (0: nothing tells).
 */
static uint64_t stack_needed(const PerfSample *s, size_t n_dwarf, size_t n_all, bool complete)
{
	return complete && n_dwarf > 0 ? s->stack_dyn_size * n_all / n_dwarf : 0;
}

/* A walk ended early at pcs[n_dwarf - 1] (or nowhere): counted for its module. */
static int count_end(StackResolver *r, const PerfSample *s, const ProcessMaps *maps,
		     const uint64_t *pcs, size_t n_dwarf, size_t n_all, UnwindEnd end, bool complete)
{
	const char *module = STACK_QUALITY_ANONYMOUS, *build_id = NULL;
	const ProcessMapping *m;
	ModuleInfo *info;
	uint32_t index;
	int k;

	if (n_dwarf > 0) {
		uint64_t addr = address_space_translate(r->space, pcs[n_dwarf - 1]);

		if (address_space_find(r->space, addr, &info)) {
			module = info->path;
			build_id = info->build_id;
		} else if ((m = process_maps_find(maps, addr)) && target_mapping_has_file(m))
			module = m->path;
	}
	k = stack_quality_module(r->quality, module, build_id, &index);
	if (k < 0)
		return k;
	stack_quality_add_end(r->quality, index, end, n_all > n_dwarf, complete,
			      end == UNWIND_END_STACK_COPY ? stack_needed(s, n_dwarf, n_all, complete)
							  : 0);
	return 0;
}

/*
 * DWARF-unwound user lookup addresses; where the walk stops early, continued
 * with the kernel's frame-pointer callchain (hybrid), and counted either way.
 */
static int collect_dwarf_pcs(StackResolver *r, const PerfSample *s, const ProcessMaps *maps,
			     size_t *ret_n, SampleStack *st)
{
	size_t max = r->max_depth, n, m;
	bool truncated = false, complete;
	UnwindEnd end;
	int k;

	k = unwind_sample(r->unwinder, s, r->pcs, max, &truncated);
	if (k < 0)
		return k;
	n = (size_t)k;
	end = unwind_end_classify(r->space, s, r->pcs, n, max, truncated);
	r->stats.ends[end]++;
	complete = false;
	m = n;
	if (end != UNWIND_END_COMPLETE && end != UNWIND_END_DEPTH) {
		m = unwind_continue_with_callchain(r->space, s, maps, r->pcs, n, max, &complete);
		if (m > n) {
			r->stats.hybrid++;
			r->stats.hybrid_complete += complete;
			truncated = !complete;
		}
	}
	if (end != UNWIND_END_COMPLETE) {
		k = count_end(r, s, maps, r->pcs, n, m, end, complete);
		if (k < 0)
			return k;
	}
	n = m;
	st->truncated = truncated;
	st->unwind_failed = truncated && n <= 1;
	*ret_n = n;
	return 0;
}

/* User lookup addresses: DWARF-unwound, or the frame-pointer callchain. */
static int collect_user_pcs(StackResolver *r, const PerfSample *s, const ProcessMaps *maps,
			    size_t *ret_n, SampleStack *st)
{
	size_t max = r->max_depth, n;
	const uint64_t *chain;

	/* without 64-bit user registers (kernel threads, 32-bit tasks): only the callchain */
	if (r->mode == STACK_UNWIND_DWARF && s->n_regs > 0 &&
	    s->regs_abi == PERF_SAMPLE_REGS_ABI_64)
		return collect_dwarf_pcs(r, s, maps, ret_n, st);
	n = sample_callchain_section(s, PERF_CONTEXT_USER, &chain);
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
	r->sample_time = sample->time;
	if (profile != r->profile) {
		location_cache_clear(r->locations);
		r->profile = profile;
		r->profile_generation++;
		/* frame ids are the profile's */
		if (r->frame_module)
			memset(r->frame_module, 0, r->frame_module_allocated * sizeof(uint32_t));
	}
	/* shared modules: the locations hold while the process's code mappings do */
	if (r->modules && (maps != r->maps || (maps && maps->generation != r->maps_generation)))
		location_cache_clear(r->locations);
	r->maps = maps;
	r->maps_generation = maps ? maps->generation : 0;
	/* shared modules follow every process themselves */
	k = r->modules ? 0 : address_space_update(r->space, maps);
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
	k = collect_user_pcs(r, sample, maps, &n_pcs, &st);
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

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* JIT frames nothing could name while sampling, named from what the JIT wrote out since. */
static int name_late_jit(StackResolver *r)
{
	_cleanup_free_ ProfileFrame *frames = NULL;
	Profile *p = r->profile;
	size_t n = 0, n_ids = 0;
	int k;

	if (r->n_unnamed_jit == 0 || !(find_jitdump(r, r->maps) || r->perf_map))
		return 0;
	qsort(r->unnamed_jit, r->n_unnamed_jit, sizeof(uint32_t), compare_u32);
	for (size_t i = 0; i < r->n_unnamed_jit; i++)
		if (i == 0 || r->unnamed_jit[i] != r->unnamed_jit[i - 1])
			r->unnamed_jit[n_ids++] = r->unnamed_jit[i];
	frames = calloc(n_ids, sizeof(ProfileFrame));
	if (!frames)
		return -ENOMEM;
	for (size_t i = 0; i < n_ids; i++) {
		ProfileFrame f = p->frames[r->unnamed_jit[i]];
		const char *name = NULL, *module = NULL;

		/* what the JIT wrote out since: its latest code at that address */
		if (r->jitdump && jitdump_lookup(r->jitdump, f.address, UINT64_MAX, &name, NULL) >= 0)
			module = jitdump_path(r->jitdump);
		else if (r->perf_map && perf_map_lookup(r->perf_map, f.address, &name, NULL) >= 0)
			module = perf_map_name(r->perf_map);
		if (!module)
			continue;
		k = name_frame(p, name, module, &f);
		if (k < 0)
			return k;
		/* compacted in place: entry n is no longer needed once read */
		r->unnamed_jit[n] = r->unnamed_jit[i];
		frames[n++] = f;
		if (r->unnamed_jit[n - 1] < r->frame_module_allocated)
			r->frame_module[r->unnamed_jit[n - 1]] = 0;
	}
	r->n_unnamed_jit = 0;
	return profile_replace_frames(p, r->unnamed_jit, frames, n);
}

/* A symbol table that names code: a stripped binary's .dynsym may list only its imports. */
static bool defines_functions(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		int type;

		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type == STT_FUNC || type == STT_GNU_IFUNC) && shndx != SHN_UNDEF)
			return true;
	}
	return false;
}

/* What names each module with unnamed frames: debug info, a symbol table, or nothing. */
static void classify_naming(StackResolver *r)
{
	for (uint32_t i = 0; i < stack_quality_n_modules(r->quality); i++) {
		const char *path = stack_quality_module_path(r->quality, i);
		Dwfl_Module *mod = address_space_find_by_path(r->space, path);
		Dwarf_Addr bias;

		if (!mod)
			continue;
		if (dwfl_module_getdwarf(mod, &bias))
			stack_quality_set_naming(r->quality, i, STACK_QUALITY_NAMING_DWARF);
		else
			stack_quality_set_naming(r->quality, i, defines_functions(mod)
									? STACK_QUALITY_NAMING_SYMBOLS
									: STACK_QUALITY_NAMING_NONE);
	}
}

int stack_resolver_finish_naming(StackResolver *r)
{
	const ProcessMapping *exe;
	int k;

	if (!r->profile || r->finished)
		return 0;
	r->finished = true;
	/* a jitdump file that could not be read while sampling is asked for once more */
	r->jitdump_generation = 0;
	if (r->maps) {
		k = name_late_jit(r);
		if (k < 0)
			return k;
		exe = main_executable(r->maps);
		if (exe) {
			k = stack_quality_set_executable(r->quality, exe->path);
			if (k < 0)
				return k;
		}
	}
	classify_naming(r);
	return 0;
}

const uint32_t *stack_resolver_get_unnamed_frames(const StackResolver *r, const Profile *p,
						  uint32_t *ret_n)
{
	/* the frame ids of another profile would mark frames of this one */
	*ret_n = p == r->profile ? (uint32_t)(r->frame_module_allocated < UINT32_MAX
						  ? r->frame_module_allocated
						  : UINT32_MAX)
				 : 0;
	return r->frame_module;
}

int stack_resolver_finish(StackResolver *r)
{
	const uint32_t *frame_module;
	uint32_t n;
	int k;

	if (!r->profile || r->finished)
		return 0;
	k = stack_resolver_finish_naming(r);
	if (k < 0)
		return k;
	frame_module = stack_resolver_get_unnamed_frames(r, r->profile, &n);
	return stack_quality_count_unnamed(r->quality, r->profile, frame_module, n);
}

const StackQuality *stack_resolver_get_quality(const StackResolver *r)
{
	return r->quality;
}
