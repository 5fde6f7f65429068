/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame-walk.h"

#include <errno.h>
#include <string.h>

/*
 * What libdwfl does per frame (elfutils 0.188 frame_unwind.c, handle_cfi),
 * and so what this must do to give the same answer:
 * - the caller's registers are evaluated one by one; a register whose slot
 *   cannot be read stays undefined, and an undefined return address (or a
 *   zero one) ends the walk as the outermost frame, not as an error;
 * - memory reads come from dwarf-unwind.c's memory_read(): the stack copy,
 *   a refusal that marks the stack exhausted when the address lies above the
 *   copy within FRAME_WALK_STACK_REGION_MAX, and otherwise the mapped files;
 *   only the first two are done here, anything else goes to libdw;
 * - a CFA based on an undefined register leaves every register undefined;
 * - the walk stops when a frame repeats the previous pc and sp (a loop).
 */

/* A read libdw would answer from the stack copy; false when beyond it. */
static bool read_word(const FrameWalkStack *s, uint64_t addr, uint64_t *ret)
{
	if (addr < s->sp || s->size < 8 || addr - s->sp > s->size - 8)
		return false;
	memcpy(ret, s->stack + (addr - s->sp), 8);
	return true;
}

int frame_walk(const FrameWalkStack *s, FrameWalkRuleFn rule_of, void *userdata, uint64_t *pcs,
	       size_t max, bool *ret_truncated, uint64_t *ret_stack_used)
{
	uint64_t pc = s->ip, sp = s->sp, bp = s->bp, last_pc = 0, last_sp = 0, used = 0;
	bool bp_valid = s->bp_valid, initial = true, exhausted = false;
	size_t n = 0;

	if (pc == 0) {
		*ret_truncated = true;
		*ret_stack_used = 0;
		return 0;
	}
	for (;;) {
		/* the caller of a call: look up the call instruction, not the return address */
		uint64_t lookup = initial ? pc : pc - 1, cfa, ra;
		const CfiRule *rule;

		if (n > 0 && pc == last_pc && sp == last_sp) {
			*ret_truncated = true;
			*ret_stack_used = used;
			return (int)n;
		}
		last_pc = pc;
		last_sp = sp;
		rule = rule_of(userdata, lookup);
		if (!rule || rule->cfa == CFI_CFA_LIBDW)
			return -EAGAIN;
		pcs[n++] = lookup;
		if (n == max) {
			*ret_truncated = true;
			*ret_stack_used = used;
			return (int)n;
		}
		switch (rule->cfa) {
		case CFI_CFA_RSP:
			cfa = sp + (uint64_t)(int64_t)rule->cfa_offset;
			break;
		case CFI_CFA_PLT:
			cfa = sp + (uint64_t)(int64_t)rule->cfa_offset +
			      ((pc & 15) >= rule->plt_threshold ? 8 : 0);
			break;
		default:
			if (!bp_valid)
				goto end;
			cfa = bp + (uint64_t)(int64_t)rule->cfa_offset;
			break;
		}
		if (rule->flags & CFI_HAS_SLOTS) {
			uint64_t lo = cfa + (uint64_t)(int64_t)rule->min_slot;
			uint64_t hi = cfa + (uint64_t)(int64_t)rule->max_slot;

			/* every read must be one the stack copy answers or refuses as beyond it */
			if ((cfa & 7) || lo < s->sp || lo < 4096 || hi < lo ||
			    hi - s->sp >= FRAME_WALK_STACK_REGION_MAX)
				return -EAGAIN;
			if (hi - s->sp + 8 > s->size)
				exhausted = true;
			if (hi - s->sp + 8 > used)
				used = hi - s->sp + 8;
		}
		if ((rule->flags & CFI_RA_UNDEFINED) ||
		    !read_word(s, cfa + (uint64_t)(int64_t)rule->ra_offset, &ra) || ra == 0)
			goto end;
		if (rule->flags & CFI_RBP_SAVED)
			bp_valid = read_word(s, cfa + (uint64_t)(int64_t)rule->rbp_offset, &bp);
		else if (rule->flags & CFI_RBP_UNDEFINED)
			bp_valid = false;
		sp = cfa;
		pc = ra;
		initial = false;
	}
end:
	*ret_truncated = exhausted;
	*ret_stack_used = used;
	return (int)n;
}
