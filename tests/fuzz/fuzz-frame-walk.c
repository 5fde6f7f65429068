/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-frame-walk: differential check of the compiled-CFI unwinder against
 * libdwfl's on samples with arbitrary registers and stack copies, against
 * this process's real address space and CFI. Both must report the same
 * lookup addresses and the same "truncated" for every input; any difference
 * aborts.
 *
 * Input: u8 depth bound (1..64), u64 ip, u64 sp, u64 bp, then the stack
 * bytes. So that walks get somewhere, values are mapped into this process:
 * ip always lands in its text; bp and every stack word below the text's size
 * become text addresses (return addresses), words of the form 0xffff'xxxx
 * become addresses in the stack copy (saved frame pointers), the rest stay
 * as they are.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "address-space.h"
#include "dwarf-unwind.h"
#include "fuzz-self.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEPTH 64
#define MAX_STACK 4096
#define STACK_BASE 0x7ffc00000000ULL

typedef struct Side {
	AddressSpace *space;
	Unwinder *unwinder;
} Side;

static SymbolCache *cache;
static Side sides[2];
static ProcessMaps *maps;
static uint64_t text_start, text_size;

/* How much of the comparison was real: inputs the tables walked without libdw. */
static void print_stats(void)
{
	UnwinderStats st;

	unwinder_get_stats(sides[0].unwinder, &st);
	fprintf(stderr, "fuzz-frame-walk: tables walked %lu of %lu inputs alone\n",
		(unsigned long)st.table_samples,
		(unsigned long)(st.table_samples + st.libdw_samples));
}

static void setup(void)
{
	fuzz_self_text(&maps, &text_start, &text_size);
	if (symbol_cache_new(&cache) < 0)
		abort();
	for (int i = 0; i < 2; i++)
		if (address_space_new(NULL, cache, 0, &sides[i].space) < 0 ||
		    address_space_update(sides[i].space, maps) < 0 ||
		    unwinder_new(sides[i].space, &sides[i].unwinder) < 0)
			abort();
	unwinder_set_method(sides[0].unwinder, UNWIND_METHOD_TABLES);
	unwinder_set_method(sides[1].unwinder, UNWIND_METHOD_LIBDW);
	atexit(print_stats);
}

static uint64_t place(uint64_t v, uint64_t sp, uint64_t stack_size)
{
	if (v < text_size)
		return text_start + v;
	if (v >> 16 == 0xffff && stack_size > 0)
		return sp + (v & 0xffff) % stack_size;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t regs[FUZZ_N_REGS] = {}, pcs[2][MAX_DEPTH], ip, sp, bp;
	uint8_t stack[MAX_STACK];
	PerfSample s = fuzz_self_sample(regs);
	bool truncated[2] = {};
	size_t depth;
	int n[2];

	if (!maps)
		setup();
	if (size < 1 + 3 * 8 || !text_size)
		return 0;
	depth = data[0] % MAX_DEPTH + 1;
	memcpy(&ip, data + 1, 8);
	memcpy(&sp, data + 9, 8);
	memcpy(&bp, data + 17, 8);
	data += 25;
	size -= 25;
	if (size > MAX_STACK)
		size = MAX_STACK;
	/* mostly a plausible stack pointer; the low bits (alignment) stay the fuzzer's */
	if (sp >> 63)
		sp = STACK_BASE + (sp & 0xffff);
	memcpy(stack, data, size);
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t w;

		memcpy(&w, stack + i, 8);
		w = place(w, sp, size);
		memcpy(stack + i, &w, 8);
	}
	s.stack = stack;
	s.stack_size = s.stack_dyn_size = size;
	regs[8] = text_start + ip % text_size; /* PERF_REG_X86_IP */
	regs[7] = sp;                          /* PERF_REG_X86_SP */
	regs[6] = place(bp, sp, size);         /* PERF_REG_X86_BP */
	s.ip = regs[8];

	for (int i = 0; i < 2; i++)
		n[i] = unwind_sample(sides[i].unwinder, &s, pcs[i], depth, &truncated[i]);
	if (n[0] != n[1] || truncated[0] != truncated[1] ||
	    (n[0] > 0 && memcmp(pcs[0], pcs[1], (size_t)n[0] * 8) != 0)) {
		for (int i = 0; i < 2; i++) {
			fprintf(stderr, "%s: %d frames%s:", i ? "libdw " : "tables", n[i],
				truncated[i] ? ", truncated" : "");
			for (int j = 0; j < n[i]; j++)
				fprintf(stderr, " %#lx", (unsigned long)pcs[i][j]);
			fputc('\n', stderr);
		}
		abort();
	}
	return 0;
}
