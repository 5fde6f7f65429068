/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One writer per format, each reading the same folding. Writers return 0 or a
 * negative errno for failures other than I/O; export_profile() checks the
 * stream for write errors once at the end.
 */

#include <stdio.h>

#include "fold.h"

int export_write_folded(const Folding *f, FILE *out);
int export_write_pprof(const Folding *f, FILE *out);
int export_write_firefox(const Folding *f, FILE *out);
int export_write_speedscope(const Folding *f, FILE *out);
int export_write_svg(const Folding *f, FILE *out);
