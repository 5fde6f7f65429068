/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "cleanup.h"

/* A text table: a header row and rows of cells, printed with aligned columns. */
typedef struct Table Table;

int table_new(size_t n_columns, const char *const *headers, Table **ret);
Table *table_free(Table *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Table *, table_free);
#define _cleanup_table_ __attribute__((cleanup(table_freep)))

/* Copies n_columns cells, control characters as \xNN; NULL cells print as "-". */
int table_add_row(Table *t, const char *const *cells);
size_t table_rows(const Table *t);
int table_print(const Table *t, FILE *f);
