/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Collapsed stacks, one "root;...;leaf COUNT" line per name sequence, in folding order. */
#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "export-writers.h"
#include "text-escape.h"

int export_write_folded(const Folding *f, FILE *out)
{
	_cleanup_free_ uint32_t *path = malloc(((size_t)f->max_depth + 1) * sizeof(uint32_t));
	const Profile *p = f->profile;

	if (!path)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_stacks; i++) {
		uint32_t depth = fold_node_path(f, f->stacks[i].node, path);

		for (uint32_t d = 0; d < depth; d++) {
			if (d > 0)
				putc_unlocked(';', out);
			write_folded_name(out, p->strings[f->nodes[path[d]].function]);
		}
		putc_unlocked(' ', out);
		write_u64(out, f->stacks[i].count);
		putc_unlocked('\n', out);
	}
	return 0;
}
