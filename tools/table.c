/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cleanup.h"
#include "control-chars.h"

struct Table {
	size_t n_columns;
	size_t n_cells, allocated;
	char **cells; /* row-major, header row first */
};

Table *table_free(Table *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->n_cells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
	return NULL;
}

int table_add_row(Table *t, const char *const *cells)
{
	int r;

	r = ARRAY_RESERVE(t->cells, t->allocated, t->n_cells + t->n_columns, 16);
	if (r < 0)
		return r;
	for (size_t i = 0; i < t->n_columns; i++) {
		/* cells come from profd and from whoever named a run: nothing may steer the terminal */
		char *c = strdup_escaped(cells[i] ? cells[i] : "-");

		if (!c)
			return -ENOMEM;
		t->cells[t->n_cells++] = c;
	}
	return 0;
}

int table_new(size_t n_columns, const char *const *headers, Table **ret)
{
	_cleanup_table_ Table *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->n_columns = n_columns;
	r = table_add_row(t, headers);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(t);
	return 0;
}

size_t table_rows(const Table *t)
{
	return t->n_cells / t->n_columns - 1;
}

int table_print(const Table *t, FILE *f)
{
	_cleanup_free_ size_t *widths = calloc(t->n_columns, sizeof(size_t));

	if (!widths)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_cells; i++) {
		size_t len = strlen(t->cells[i]);

		if (len > widths[i % t->n_columns])
			widths[i % t->n_columns] = len;
	}
	for (size_t i = 0; i < t->n_cells; i++) {
		size_t column = i % t->n_columns;

		if (column + 1 == t->n_columns)
			fprintf(f, "%s\n", t->cells[i]); /* no trailing blanks */
		else
			fprintf(f, "%-*s  ", (int)widths[column], t->cells[i]);
	}
	return 0;
}
