/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Collapsed stacks, one "root;...;leaf COUNT" line per name sequence, in folding
 * order. In names, ';' becomes ':' and line breaks become spaces, so lines parse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "export-writers.h"
#include "text-escape.h"

/* Names repeat on every line: look up each one's folded spelling and length once. */
typedef struct FoldedNames {
	const char **text; /* NULL until first use */
	uint32_t *length;
	char **owned;      /* rewritten names (those with ';' or line breaks) */
	uint32_t n_owned, owned_allocated;
} FoldedNames;

static void folded_names_done(FoldedNames *n)
{
	for (uint32_t i = 0; i < n->n_owned; i++)
		free(n->owned[i]);
	free(n->owned);
	free(n->text);
	free(n->length);
}

static int folded_name(FoldedNames *n, const Profile *p, uint32_t id, const char **ret,
		       uint32_t *ret_length)
{
	if (!n->text[id]) {
		const char *s = p->strings[id];

		if (strpbrk(s, ";\n\r")) {
			char *copy = strdup(s);

			if (!copy)
				return -ENOMEM;
			if (ARRAY_RESERVE_U32(n->owned, n->owned_allocated, (size_t)n->n_owned + 1, 8) <
			    0) {
				free(copy);
				return -ENOMEM;
			}
			n->owned[n->n_owned++] = copy;
			for (char *c = copy; *c; c++)
				*c = *c == ';' ? ':' : (*c == '\n' || *c == '\r') ? ' ' : *c;
			s = copy;
		}
		n->text[id] = s;
		n->length[id] = strlen(s);
	}
	*ret = n->text[id];
	*ret_length = n->length[id];
	return 0;
}

int export_write_folded(const Folding *f, FILE *out)
{
	const Profile *p = f->profile;
	_cleanup_free_ uint32_t *path = malloc(((size_t)f->max_depth + 1) * sizeof(uint32_t));
	_cleanup_(folded_names_done) FoldedNames names = {
		.text = calloc((size_t)p->n_strings + 1, sizeof(char *)),
		.length = malloc(((size_t)p->n_strings + 1) * sizeof(uint32_t)),
	};
	int r;

	if (!path || !names.text || !names.length)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_stacks; i++) {
		uint32_t depth = fold_node_path(f, f->stacks[i].node, path);

		for (uint32_t d = 0; d < depth; d++) {
			const char *name;
			uint32_t length;

			r = folded_name(&names, p, f->nodes[path[d]].function, &name, &length);
			if (r < 0)
				return r;
			if (d > 0)
				putc_unlocked(';', out);
			fwrite_unlocked(name, 1, length, out);
		}
		putc_unlocked(' ', out);
		write_u64(out, f->stacks[i].count);
		putc_unlocked('\n', out);
	}
	return 0;
}
