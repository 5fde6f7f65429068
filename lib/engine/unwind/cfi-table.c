/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cfi-table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "hash.h"
#include "id-table.h"

/* DWARF register numbers of x86-64 (SysV psABI) */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define N_REGS 17 /* what libdwfl's x86-64 backend unwinds (ebl_frame_nregs) */

/* Row i covers [base + starts[i], base + starts[i + 1]); the last row is always a gap. */
struct CfiTable {
	uint64_t base;
	uint32_t *starts;
	uint16_t *rule_of; /* index into rules; 0 is the CFI_CFA_LIBDW rule */
	size_t n_rows;
	CfiRule *rules;
	size_t n_rules;
};

static const CfiRule libdw_rule = { .cfa = CFI_CFA_LIBDW };

_Static_assert(sizeof(CfiRule) == 16, "CfiRule has padding");

typedef struct Fde {
	uint64_t lo, hi;
} Fde;

/*
 * libdw computes a row by running its FDE's program from the start, so
 * compiling an FDE of N rows costs N^2/2 steps: bounded, so that hostile CFI
 * cannot stall the unwinder (real code: at most a few hundred rows per FDE,
 * ~300k steps per module). What is left over stays libdw's.
 */
#define MAX_ROWS_PER_FDE 4096
#define MAX_STEPS (16U << 20)

typedef struct Builder {
	CfiTable *t;
	uint64_t steps;
	size_t starts_allocated, rule_of_allocated, rules_allocated;
	IdTable rule_index; /* ids: indices into the table's rules */
} Builder;

CfiTable *cfi_table_free(CfiTable *t)
{
	if (!t)
		return NULL;
	free(t->starts);
	free(t->rule_of);
	free(t->rules);
	free(t);
	return NULL;
}

const CfiRule *cfi_table_lookup(const CfiTable *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n_rows;
	uint32_t key;

	if (t->n_rows == 0 || addr < t->base || addr - t->base > UINT32_MAX)
		return &libdw_rule;
	key = (uint32_t)(addr - t->base);
	/* the last row starting at or below key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->starts[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? &libdw_rule : &t->rules[t->rule_of[lo - 1]];
}

size_t cfi_table_bytes(const CfiTable *t)
{
	return sizeof(*t) + t->n_rows * (sizeof(uint32_t) + sizeof(uint16_t)) +
	       t->n_rules * sizeof(CfiRule);
}

size_t cfi_table_rows(const CfiTable *t)
{
	return t->n_rows;
}

static uint64_t hash_rule(const CfiRule *r)
{
	return hash_finalize(hash_fnv1a(HASH_FNV1A_BASIS, r, sizeof(*r)));
}

static uint64_t hash_rule_id(const void *userdata, uint32_t id)
{
	const CfiTable *t = userdata;

	return hash_rule(&t->rules[id]);
}

typedef struct RuleKey {
	const CfiTable *t;
	const CfiRule *rule;
} RuleKey;

static bool rule_equal(const void *userdata, uint32_t id)
{
	const RuleKey *k = userdata;

	return memcmp(&k->t->rules[id], k->rule, sizeof(*k->rule)) == 0;
}

/* The index of 'rule' in the table, added if new; -E2BIG beyond what a row can name. */
static int rule_index(Builder *b, const CfiRule *rule, uint16_t *ret)
{
	CfiTable *t = b->t;
	uint32_t slot;

	if (id_table_reserve(&b->rule_index, 1, hash_rule_id, t) < 0)
		return -ENOMEM;
	if (id_table_find(&b->rule_index, hash_rule(rule), rule_equal, &(RuleKey){ t, rule }, &slot)) {
		*ret = (uint16_t)b->rule_index.slots[slot];
		return 0;
	}
	if (t->n_rules > UINT16_MAX)
		return -E2BIG;
	if (ARRAY_RESERVE(t->rules, b->rules_allocated, t->n_rules + 1, 64) < 0)
		return -ENOMEM;
	t->rules[t->n_rules] = *rule;
	id_table_insert(&b->rule_index, slot, (uint32_t)t->n_rules);
	*ret = (uint16_t)t->n_rules++;
	return 0;
}

/* Append the row starting at ELF address 'start' (never below the last row's start). */
static int add_row(Builder *b, uint64_t start, const CfiRule *rule)
{
	CfiTable *t = b->t;
	uint16_t idx;
	int r;

	r = rule_index(b, rule, &idx);
	if (r == -E2BIG)
		idx = 0; /* a module with 65536 distinct rules: the rest is libdw's */
	else if (r < 0)
		return r;
	if (t->n_rows == 0)
		t->base = start;
	if (start - t->base > UINT32_MAX)
		return -E2BIG;
	if (t->n_rows > 0 && t->starts[t->n_rows - 1] == (uint32_t)(start - t->base)) {
		/* an empty range: the new rule replaces it */
		t->rule_of[t->n_rows - 1] = idx;
		if (t->n_rows > 1 && t->rule_of[t->n_rows - 2] == idx)
			t->n_rows--;
		return 0;
	}
	if (t->n_rows > 0 && t->rule_of[t->n_rows - 1] == idx)
		return 0;
	if (ARRAY_RESERVE(t->starts, b->starts_allocated, t->n_rows + 1, 256) < 0 ||
	    ARRAY_RESERVE(t->rule_of, b->rule_of_allocated, t->n_rows + 1, 256) < 0)
		return -ENOMEM;
	t->starts[t->n_rows] = (uint32_t)(start - t->base);
	t->rule_of[t->n_rows++] = idx;
	return 0;
}

typedef enum RegRule { REG_UNDEFINED, REG_SAME, REG_AT_CFA, REG_CFA_PLUS, REG_OTHER } RegRule;

/* How libdw recovers the caller's 'regno': *ret_offset is the CFA-relative slot or value. */
static RegRule register_rule(Dwarf_Frame *frame, int regno, int64_t *ret_offset)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
		return REG_OTHER;
	if (nops == 0)
		return ops == mem ? REG_UNDEFINED : ops == NULL ? REG_SAME : REG_OTHER;
	/* offset(N) and val_offset(N) come as DW_OP_call_frame_cfa [plus_uconst N] [stack_value] */
	if (ops != mem || ops[0].atom != DW_OP_call_frame_cfa)
		return REG_OTHER;
	*ret_offset = 0;
	if (nops > 1 && ops[1].atom == DW_OP_plus_uconst)
		*ret_offset = (int64_t)ops[1].number;
	if (ops[nops - 1].atom == DW_OP_stack_value)
		return nops == 3 || (nops == 2 && *ret_offset == 0) ? REG_CFA_PLUS : REG_OTHER;
	return nops <= 2 ? REG_AT_CFA : REG_OTHER;
}

/* The PLT's CFA: rsp + N, + 8 from the byte of each 16-byte stub where it pushed. */
static bool is_plt_expression(const Dwarf_Op *ops, size_t nops, CfiRule *rule)
{
	if (nops != 9 || ops[0].atom != DW_OP_breg7 || ops[1].atom != DW_OP_breg16 ||
	    ops[1].number != 0 || ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 || ops[5].atom != DW_OP_ge ||
	    ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return false;
	if ((int64_t)ops[0].number < INT32_MIN || (int64_t)ops[0].number > INT32_MAX)
		return false;
	rule->cfa = CFI_CFA_PLT;
	rule->cfa_offset = (int32_t)ops[0].number;
	rule->plt_threshold = (uint8_t)(ops[4].atom - DW_OP_lit0);
	return true;
}

static bool read_cfa(Dwarf_Frame *frame, CfiRule *rule)
{
	Dwarf_Op *ops;
	size_t nops;
	int64_t off;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
		return false;
	if (nops != 1 || ops[0].atom != DW_OP_bregx)
		return is_plt_expression(ops, nops, rule);
	off = (int64_t)ops[0].number2;
	if (off < INT32_MIN || off > INT32_MAX)
		return false;
	if (ops[0].number == REG_RSP)
		rule->cfa = CFI_CFA_RSP;
	else if (ops[0].number == REG_RBP)
		rule->cfa = CFI_CFA_RBP;
	else
		return false;
	rule->cfa_offset = (int32_t)off;
	return true;
}

static bool is_slot(int64_t off)
{
	return off % 8 == 0 && off >= INT16_MIN && off <= INT16_MAX;
}

/* Every register libdw restores, as the rule's fields; false when it takes more than those. */
static bool read_registers(Dwarf_Frame *frame, CfiRule *rule)
{
	bool slots = false;

	for (int regno = 0; regno < N_REGS; regno++) {
		int64_t off = 0;
		RegRule rr = register_rule(frame, regno, &off);

		if (rr == REG_OTHER || ((rr == REG_AT_CFA || rr == REG_CFA_PLUS) && !is_slot(off)))
			return false;
		if (regno == REG_RSP) {
			/* the caller's rsp is the CFA, libdw's x86-64 default */
			if (rr != REG_CFA_PLUS || off != 0)
				return false;
			continue;
		}
		if (regno == REG_RA) {
			if (rr == REG_UNDEFINED)
				rule->flags |= CFI_RA_UNDEFINED;
			else if (rr == REG_AT_CFA)
				rule->ra_offset = (int16_t)off;
			else
				return false;
		} else if (regno == REG_RBP) {
			if (rr == REG_UNDEFINED)
				rule->flags |= CFI_RBP_UNDEFINED;
			else if (rr == REG_AT_CFA) {
				rule->flags |= CFI_RBP_SAVED;
				rule->rbp_offset = (int16_t)off;
			} else if (rr != REG_SAME)
				return false;
		}
		if (rr != REG_AT_CFA)
			continue;
		if (!slots || off < rule->min_slot)
			rule->min_slot = (int16_t)off;
		if (!slots || off > rule->max_slot)
			rule->max_slot = (int16_t)off;
		slots = true;
	}
	if (slots)
		rule->flags |= CFI_HAS_SLOTS;
	return true;
}

/* The rule of one row of the CFA table, and where the row ends. */
static void rule_of_frame(Dwarf_Frame *frame, CfiRule *ret, Dwarf_Addr *ret_end)
{
	CfiRule rule = {};
	Dwarf_Addr start;
	bool signal = false;
	int ra;

	ra = dwarf_frame_info(frame, &start, ret_end, &signal);
	/* signal frames change how libdw looks up the next frame: leave them to it */
	if (ra != REG_RA || signal || !read_cfa(frame, &rule) || !read_registers(frame, &rule))
		rule = libdw_rule;
	*ret = rule;
}

/* The rows of one FDE's range, as libdw sees them. */
static int add_fde_rows(Builder *b, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi)
{
	uint64_t pc = lo;
	int r;

	for (unsigned row = 0; pc < hi && row < MAX_ROWS_PER_FDE && b->steps < MAX_STEPS; row++) {
		Dwarf_Frame *frame;
		Dwarf_Addr end = pc;
		CfiRule rule;

		if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
			break;
		rule_of_frame(frame, &rule, &end);
		free(frame);
		b->steps += row + 1;
		r = add_row(b, pc, &rule);
		if (r < 0)
			return r;
		if (end <= pc)
			break;
		pc = end;
	}
	/* the range's end, or where libdw stopped understanding it */
	return add_row(b, pc < hi ? pc : hi, &libdw_rule);
}

/* DW_EH_PE_* pointer decoding, for the FDEs' address fields. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field_vaddr,
			 uint64_t *ret)
{
	const uint8_t *s = *p;
	uint64_t v = 0;
	size_t size;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		size = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		size = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		size = 2;
		break;
	default:
		return false; /* LEB128 pointers: not seen in .eh_frame of x86-64 code */
	}
	if ((size_t)(end - s) < size)
		return false;
	memcpy(&v, s, size); /* little-endian */
	if ((enc & 0x08) && size < 8 && (v >> (size * 8 - 1)))
		v |= ~0ULL << (size * 8); /* sign-extend sdata2/4 */
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += field_vaddr;
		break;
	default:
		return false;
	}
	if (enc & DW_EH_PE_indirect)
		return false;
	*p = s + size;
	*ret = v;
	return true;
}

/* The FDE address encoding a CIE declares ('R' in a "z" augmentation); false if unreadable. */
static bool cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *ret)
{
	const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
	const char *a = cie->augmentation;

	*ret = DW_EH_PE_absptr;
	if (a[0] == '\0')
		return true;
	if (a[0] != 'z')
		return false;
	for (a++; *a; a++) {
		uint64_t ignored;
		uint8_t enc;

		if (p >= end && *a != 'S')
			return false;
		switch (*a) {
		case 'R':
			*ret = *p++;
			break;
		case 'L':
			p++;
			break;
		case 'P':
			enc = *p++;
			/* an absolute or pc-relative personality pointer: only its size matters */
			if (!read_encoded(&p, end, enc & 0x0f, 0, &ignored))
				return false;
			break;
		case 'S':
			break;
		default:
			return false;
		}
	}
	return true;
}

typedef struct CieEncoding {
	Dwarf_Off offset;
	uint8_t encoding;
	bool readable;
} CieEncoding;

static int compare_fde(const void *a, const void *b)
{
	const Fde *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The .eh_frame section's data and address. */
static Elf_Data *find_eh_frame(Elf *elf, uint64_t *ret_addr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && strcmp(name, ".eh_frame") == 0) {
			*ret_addr = shdr.sh_addr;
			return elf_getdata(scn, NULL);
		}
	}
	return NULL;
}

/* Every FDE's [lo, hi), sorted. */
static int collect_fdes(Elf *elf, Fde **ret, size_t *ret_n)
{
	_cleanup_free_ CieEncoding *cies = NULL;
	_cleanup_free_ Fde *fdes = NULL;
	size_t n_cies = 0, cies_allocated = 0, n_fdes = 0, fdes_allocated = 0;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next;
	uint64_t section_addr = 0;
	Elf_Data *data;

	data = ident && ident[EI_CLASS] == ELFCLASS64 ? find_eh_frame(elf, &section_addr) : NULL;
	if (!data || !data->d_buf)
		goto done;
	for (;; off = next) {
		Dwarf_CFI_Entry e;
		const CieEncoding *cie = NULL;
		const uint8_t *p, *end;
		uint64_t lo, len;
		int k;

		/* an entry whose length is unreadable leaves 'next' alone: nothing after it is found */
		next = (Dwarf_Off)-1;
		k = dwarf_next_cfi(ident, data, true, off, &next, &e);
		if (k > 0 || next == (Dwarf_Off)-1 || next <= off)
			break;
		if (k < 0)
			continue; /* a malformed entry that can be skipped */
		if (dwarf_cfi_cie_p(&e)) {
			if (ARRAY_RESERVE(cies, cies_allocated, n_cies + 1, 16) < 0)
				return -ENOMEM;
			cies[n_cies].offset = off;
			cies[n_cies].readable = cie_fde_encoding(&e.cie, &cies[n_cies].encoding);
			n_cies++;
			continue;
		}
		for (size_t i = n_cies; i > 0; i--)
			if (cies[i - 1].offset == e.fde.CIE_pointer) {
				cie = &cies[i - 1];
				break;
			}
		if (!cie || !cie->readable)
			continue;
		p = e.fde.start;
		end = e.fde.end;
		if (!read_encoded(&p, end, cie->encoding,
				  section_addr + (uint64_t)(p - (const uint8_t *)data->d_buf), &lo) ||
		    !read_encoded(&p, end, cie->encoding & 0x0f, 0, &len) || len == 0 ||
		    lo + len < lo)
			continue;
		if (ARRAY_RESERVE(fdes, fdes_allocated, n_fdes + 1, 256) < 0)
			return -ENOMEM;
		fdes[n_fdes++] = (Fde){ .lo = lo, .hi = lo + len };
	}
	if (n_fdes > 0)
		qsort(fdes, n_fdes, sizeof(Fde), compare_fde);
done:
	*ret = TAKE_PTR(fdes);
	*ret_n = n_fdes;
	return 0;
}

int cfi_table_build(Dwfl_Module *mod, CfiTable **ret)
{
	_cleanup_(cfi_table_freep) CfiTable *t = calloc(1, sizeof(*t));
	_cleanup_free_ Fde *fdes = NULL;
	Builder b = { .t = t };
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	size_t n_fdes = 0;
	uint64_t end = 0;
	uint16_t ignored;
	Elf *elf;
	int r;

	if (!t)
		return -ENOMEM;
	/* rule 0: CFI_CFA_LIBDW */
	r = rule_index(&b, &libdw_rule, &ignored);
	if (r < 0)
		goto out;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	elf = cfi ? dwfl_module_getelf(mod, &bias) : NULL;
	if (elf) {
		r = collect_fdes(elf, &fdes, &n_fdes);
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < n_fdes; i++) {
		/* overlapping FDEs (broken files): the earlier one keeps its range */
		uint64_t lo = fdes[i].lo > end ? fdes[i].lo : end;

		if (lo >= fdes[i].hi)
			continue;
		if (b.steps >= MAX_STEPS)
			break;
		r = add_fde_rows(&b, cfi, lo, fdes[i].hi);
		if (r == -E2BIG)
			break; /* a module over 4 GiB: the rest is libdw's */
		if (r < 0)
			goto out;
		end = fdes[i].hi;
	}
	/* whatever follows the last range is libdw's, also when the table stopped short */
	if (t->n_rows > 0)
		t->rule_of[t->n_rows - 1] = 0;
	r = 0;
	*ret = TAKE_PTR(t);
out:
	id_table_done(&b.rule_index);
	return r;
}

/* base, number of rows and of rules, then the three arrays as they are in memory */
int cfi_table_write(const CfiTable *t, FILE *f)
{
	uint64_t counts[3] = { t->base, t->n_rows, t->n_rules };

	if (fwrite(counts, sizeof(counts), 1, f) != 1 ||
	    fwrite(t->starts, sizeof(uint32_t), t->n_rows, f) != t->n_rows ||
	    fwrite(t->rule_of, sizeof(uint16_t), t->n_rows, f) != t->n_rows ||
	    fwrite(t->rules, sizeof(CfiRule), t->n_rules, f) != t->n_rules)
		return -EIO;
	return 0;
}

static bool rule_valid(const CfiRule *r)
{
	CfiRule copy = *r;

	/* nothing the walker does not know */
	copy.flags &= CFI_RA_UNDEFINED | CFI_RBP_SAVED | CFI_RBP_UNDEFINED | CFI_HAS_SLOTS;
	return r->cfa <= CFI_CFA_PLT && copy.flags == r->flags && r->plt_threshold < 16 &&
	       r->reserved == 0;
}

int cfi_table_read(ByteReader *r, CfiTable **ret)
{
	_cleanup_(cfi_table_freep) CfiTable *t = calloc(1, sizeof(*t));
	uint64_t counts[3];
	const void *starts, *rule_of, *rules;

	if (!t)
		return -ENOMEM;
	if (!BYTE_READER_GET(r, counts) || counts[1] > UINT32_MAX || counts[2] == 0 ||
	    counts[2] > (uint64_t)UINT16_MAX + 1)
		return -EBADMSG;
	t->base = counts[0];
	t->n_rows = counts[1];
	t->n_rules = counts[2];
	starts = byte_reader_take(r, t->n_rows * sizeof(uint32_t));
	rule_of = byte_reader_take(r, t->n_rows * sizeof(uint16_t));
	rules = byte_reader_take(r, t->n_rules * sizeof(CfiRule));
	if (!starts || !rule_of || !rules)
		return -EBADMSG;
	t->starts = malloc(t->n_rows * sizeof(uint32_t) + 1);
	t->rule_of = malloc(t->n_rows * sizeof(uint16_t) + 1);
	t->rules = malloc(t->n_rules * sizeof(CfiRule));
	if (!t->starts || !t->rule_of || !t->rules)
		return -ENOMEM;
	memcpy(t->starts, starts, t->n_rows * sizeof(uint32_t));
	memcpy(t->rule_of, rule_of, t->n_rows * sizeof(uint16_t));
	memcpy(t->rules, rules, t->n_rules * sizeof(CfiRule));
	/* what lookups rely on: rows in order, rule indexes in range, rule 0 libdw's */
	if (memcmp(&t->rules[0], &libdw_rule, sizeof(CfiRule)) != 0)
		return -EBADMSG;
	for (size_t i = 0; i < t->n_rows; i++)
		if ((i > 0 && t->starts[i] <= t->starts[i - 1]) || t->rule_of[i] >= t->n_rules)
			return -EBADMSG;
	for (size_t i = 0; i < t->n_rules; i++)
		if (!rule_valid(&t->rules[i]))
			return -EBADMSG;
	*ret = TAKE_PTR(t);
	return 0;
}
