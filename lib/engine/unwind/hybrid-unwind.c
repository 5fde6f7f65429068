/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hybrid-unwind.h"

#include <elfutils/libdw.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char *const end_names[_UNWIND_END_MAX] = {
	[UNWIND_END_COMPLETE] = "complete",
	[UNWIND_END_DEPTH] = "depth-bound",
	[UNWIND_END_NO_MODULE] = "no-module",
	[UNWIND_END_NO_CFI] = "no-cfi",
	[UNWIND_END_STACK_COPY] = "stack-copy",
	[UNWIND_END_BROKEN] = "broken",
};

const char *unwind_end_to_string(UnwindEnd e)
{
	return e < _UNWIND_END_MAX ? end_names[e] : NULL;
}

size_t sample_callchain_section(const PerfSample *s, uint64_t context, const uint64_t **ret)
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

/* Does 'cfi' say how to unwind from 'pc'? */
static bool cfi_covers(Dwarf_CFI *cfi, Dwarf_Addr pc)
{
	Dwarf_Frame *frame = NULL;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return false;
	free(frame);
	return true;
}

static bool module_has_cfi(Dwfl_Module *mod, uint64_t addr)
{
	Dwarf_Addr bias = 0;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);

	if (cfi_covers(cfi, addr - bias))
		return true;
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	return cfi_covers(cfi, addr - bias);
}

UnwindEnd unwind_end_classify(AddressSpace *space, const PerfSample *s, const uint64_t *pcs,
			      size_t n, size_t max, bool truncated)
{
	ModuleInfo *info;
	Dwfl_Module *mod;
	uint64_t addr;

	if (!truncated)
		return UNWIND_END_COMPLETE;
	if (n >= max)
		return UNWIND_END_DEPTH;
	if (n == 0)
		return UNWIND_END_BROKEN;
	addr = address_space_translate(space, pcs[n - 1]);
	mod = address_space_find(space, addr, &info);
	if (!mod)
		return UNWIND_END_NO_MODULE;
	if (!module_has_cfi(mod, addr))
		return UNWIND_END_NO_CFI;
	/* CFI for the frame, but its caller's frame was not in the copy: the copy was full */
	if (s->stack_dyn_size >= s->stack_size)
		return UNWIND_END_STACK_COPY;
	return UNWIND_END_BROKEN;
}

/* Is there a call instruction right before return address 'ret' in a module's code? */
static bool follows_call(AddressSpace *space, uint64_t ret)
{
	uint8_t b[8];
	uint64_t word;

	if (!address_space_read_word(space, ret - 8, &word))
		return false;
	memcpy(b, &word, sizeof(b)); /* b[7] is the byte at ret - 1 */
	/* call rel32 (e8), or ff /2: call through a register or memory, 2 to 7 bytes long */
	if (b[3] == 0xe8)
		return true;
	for (int len = 2; len <= 7; len++)
		if (b[8 - len] == 0xff && (b[8 - len + 1] & 0x38) == 0x10)
			return true;
	return false;
}

/* A return address the chain may give: into mapped code; into a module, after a call. */
static bool is_return_address(AddressSpace *space, const ProcessMaps *maps, uint64_t ret)
{
	const ProcessMapping *m = process_maps_find(maps, ret);
	ModuleInfo *info;

	if (!m || !(m->prot & PROT_EXEC) || ret < 8)
		return false;
	if (!address_space_find(space, address_space_translate(space, ret), &info))
		return true; /* JIT code: nothing to read it from */
	return follows_call(space, address_space_translate(space, ret));
}

size_t unwind_continue_with_callchain(AddressSpace *space, const PerfSample *s,
				      const ProcessMaps *maps, uint64_t *pcs, size_t n, size_t max,
				      bool *ret_complete)
{
	const uint64_t *chain;
	size_t m = sample_callchain_section(s, PERF_CONTEXT_USER, &chain), j;

	*ret_complete = false;
	if (n == 0 || m < 2)
		return n;
	/* where the chain meets the walk: its IP for a walk of one frame, else the last call */
	if (n == 1)
		j = chain[0] == pcs[0] ? 0 : m;
	else
		for (j = 1; j < m && chain[j] - 1 != pcs[n - 1]; j++)
			;
	if (j >= m)
		return n;
	for (j++; j < m && n < max; j++) {
		if (!is_return_address(space, maps, chain[j]))
			return n;
		pcs[n++] = chain[j] - 1;
	}
	*ret_complete = j == m;
	return n;
}
