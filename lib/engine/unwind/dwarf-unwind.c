/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "dwarf-unwind.h"

#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "frame-walk.h"

/* DWARF register numbers of x86-64 (SysV psABI) and where perf puts them. */
static const unsigned dwarf_to_perf_reg[] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	PERF_REG_X86_IP,
};

#define DWARF_REG_SP 7

typedef struct UnwindWalk {
	uint64_t *pcs;
	size_t n, max;
	uint64_t last_pc, last_sp;
	bool looped;
} UnwindWalk;

struct Unwinder {
	AddressSpace *space;
	Elf *arch_elf; /* tells libdwfl the architecture; must live as long as the Dwfl */
	Elf64_Ehdr arch_ehdr;
	bool attached;
	UnwindMethod method;
	UnwinderStats stats;

	/* the sample being unwound, read by the callbacks */
	const PerfSample *sample;
	uint64_t sp;
	bool stack_exhausted;
	uint64_t stack_used;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	/* dwfl_getthread_frames() uses get_thread(); there is nothing to enumerate */
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	Unwinder *u = arg;

	*thread_argp = u;
	return u->sample && (pid_t)u->sample->tid == tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	Unwinder *u = arg;
	const PerfSample *s = u->sample;

	if (addr & 7 || addr < 4096)
		return false;
	/* no "addr - sp + 8": the sample's sp is the target's, and near 2^64 that wraps */
	if (addr >= u->sp && addr - u->sp < FRAME_WALK_STACK_REGION_MAX &&
	    addr - u->sp + 8 > u->stack_used)
		u->stack_used = addr - u->sp + 8;
	if (addr >= u->sp && s->stack_dyn_size >= 8 && addr - u->sp <= s->stack_dyn_size - 8) {
		memcpy(result, s->stack + (addr - u->sp), 8);
		return true;
	}
	if (addr >= u->sp && addr - u->sp < FRAME_WALK_STACK_REGION_MAX) {
		u->stack_exhausted = true;
		return false;
	}
	return address_space_read_word(u->space, addr, result);
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	Unwinder *u = arg;
	uint64_t v;

	for (unsigned i = 0; i < ELEMENTSOF(dwarf_to_perf_reg); i++) {
		Dwarf_Word w;

		if (perf_sample_get_reg(u->sample, dwarf_to_perf_reg[i], &v) < 0)
			continue;
		w = v;
		if (!dwfl_thread_state_registers(thread, (int)i, 1, &w))
			return false;
	}
	if (perf_sample_get_reg(u->sample, PERF_REG_X86_IP, &v) < 0)
		return false;
	dwfl_thread_state_register_pc(thread, v);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

Unwinder *unwinder_free(Unwinder *u)
{
	if (!u)
		return NULL;
	if (u->arch_elf)
		elf_end(u->arch_elf);
	free(u);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(Unwinder *, unwinder_free);

int unwinder_new(AddressSpace *space, Unwinder **ret)
{
	_cleanup_(unwinder_freep) Unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->space = space;
	/* a bare x86-64 ELF header is all libdwfl needs to pick its unwinder backend */
	memcpy(u->arch_ehdr.e_ident, ELFMAG, SELFMAG);
	u->arch_ehdr.e_ident[EI_CLASS] = ELFCLASS64;
	u->arch_ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	u->arch_ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	u->arch_ehdr.e_type = ET_CORE;
	u->arch_ehdr.e_machine = EM_X86_64;
	u->arch_ehdr.e_version = EV_CURRENT;
	u->arch_ehdr.e_ehsize = sizeof(Elf64_Ehdr);
	elf_version(EV_CURRENT);
	u->arch_elf = elf_memory((char *)&u->arch_ehdr, sizeof(u->arch_ehdr));
	if (!u->arch_elf)
		return -ENOMEM;
	*ret = TAKE_PTR(u);
	return 0;
}

void unwinder_set_method(Unwinder *u, UnwindMethod method)
{
	u->method = method;
}

void unwinder_get_stats(const Unwinder *u, UnwinderStats *ret)
{
	*ret = u->stats;
}

/* FrameWalkRuleFn: the rule of the module's table, compiled on first use. */
static const CfiRule *table_rule(void *userdata, uint64_t pc)
{
	Unwinder *u = userdata;
	ModuleInfo *info;
	Dwfl_Module *mod = address_space_find(u->space, pc, &info);
	const CfiTable *t;

	if (!mod)
		return NULL;
	t = symbol_module_get_cfi(info->module);
	if (!t) {
		CfiTable *built;

		if (cfi_table_build(mod, &built) < 0)
			return NULL;
		t = symbol_module_set_cfi(info->module, built);
	}
	return cfi_table_lookup(t, pc - info->bias);
}

/* The walk with the tables alone; -EAGAIN when libdwfl has to do it. */
static int unwind_with_tables(Unwinder *u, const PerfSample *sample, uint64_t *pcs, size_t max,
			      bool *ret_truncated, uint64_t *ret_stack_used)
{
	FrameWalkStack s = { .sp = u->sp, .stack = sample->stack, .size = sample->stack_dyn_size };

	if (perf_sample_get_reg(sample, PERF_REG_X86_IP, &s.ip) < 0)
		return -EAGAIN;
	s.bp_valid = perf_sample_get_reg(sample, PERF_REG_X86_BP, &s.bp) >= 0;
	return frame_walk(&s, table_rule, u, pcs, max, ret_truncated, ret_stack_used);
}

static int frame_callback(Dwfl_Frame *state, void *arg)
{
	UnwindWalk *w = arg;
	Dwarf_Addr pc, sp = 0;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	dwfl_frame_reg(state, DWARF_REG_SP, &sp);
	/* same pc and sp again: the CFI leads nowhere */
	if (w->n > 0 && pc == w->last_pc && sp == w->last_sp) {
		w->looped = true;
		return DWARF_CB_ABORT;
	}
	w->last_pc = pc;
	w->last_sp = sp;
	if (pc == 0)
		return DWARF_CB_ABORT;
	w->pcs[w->n++] = activation ? pc : pc - 1;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* A sample's stack use: what its walk read (or wanted to read) above sp. */
static void count_stack_use(Unwinder *u, uint64_t used, bool exhausted)
{
	uint64_t kib = (used + 1023) / 1024;

	u->stats.stack_kib[kib < UNWIND_STACK_BUCKETS ? kib : UNWIND_STACK_BUCKETS - 1]++;
	u->stats.exhausted_samples += exhausted;
}

int unwind_sample(Unwinder *u, const PerfSample *sample, uint64_t *pcs, size_t max,
		  bool *ret_truncated)
{
	Dwfl *dwfl = address_space_get_dwfl(u->space);
	UnwindWalk w = { .pcs = pcs, .max = max };
	uint64_t used;
	int r;

	/* 32-bit tasks (ABI_32) have other DWARF register numbers: not unwound here */
	if (max == 0 || sample->n_regs == 0 || sample->regs_abi != PERF_SAMPLE_REGS_ABI_64 ||
	    perf_sample_get_reg(sample, PERF_REG_X86_SP, &u->sp) < 0)
		return 0;
	if (u->method == UNWIND_METHOD_TABLES) {
		r = unwind_with_tables(u, sample, pcs, max, ret_truncated, &used);
		if (r != -EAGAIN) {
			u->stats.table_samples++;
			count_stack_use(u, used, used > sample->stack_dyn_size);
			return r;
		}
	}
	u->stats.libdw_samples++;
	if (!u->attached) {
		if (!dwfl_attach_state(dwfl, u->arch_elf, (pid_t)sample->pid, &thread_callbacks, u))
			return -EINVAL;
		u->attached = true;
	}
	u->sample = sample;
	u->stack_exhausted = false;
	u->stack_used = 0;
	r = dwfl_getthread_frames(dwfl, (pid_t)sample->tid, frame_callback, &w);
	u->sample = NULL;
	count_stack_use(u, u->stack_used, u->stack_exhausted);
	/* 0: the outermost frame says its return address is undefined (_start, clone) */
	*ret_truncated = r != 0 || w.looped || u->stack_exhausted;
	return (int)w.n;
}

uint32_t unwind_suggest_stack_bytes(const UnwinderStats *st, uint32_t copied, uint32_t ceiling)
{
	uint64_t total = 0, below = 0, want;
	size_t kib;

	for (kib = 0; kib < UNWIND_STACK_BUCKETS; kib++)
		total += st->stack_kib[kib];
	if (total == 0)
		return 0;
	if (st->exhausted_samples * 100 > total)
		want = (uint64_t)copied * 2;
	else {
		for (kib = 0; kib < UNWIND_STACK_BUCKETS - 1; kib++) {
			below += st->stack_kib[kib];
			if (below * 1000 >= total * 999)
				break;
		}
		want = kib * 1024;
		want += want / 4 + 1024;
	}
	want = (want + 511) & ~(uint64_t)511;
	if (want < UNWIND_STACK_MIN)
		want = UNWIND_STACK_MIN;
	return want > ceiling ? ceiling : (uint32_t)want;
}
