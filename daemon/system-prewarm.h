/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What every caller's first session would otherwise do for the system C
 * library (libc and ld.so, mapped by every target), done once when profd
 * starts, at nice 19 on a thread of its own, before any session asks (#14):
 * its separate debug file inflated (inflated-debug.h), and its unwind table
 * compiled into the shared symbol store (state/symbols/shared/), from which
 * each uid's unwinder loads a module it has no file of its own for.
 *
 * Only profd writes symbols/shared/ (unwinders save into their uid's
 * directory), and only for files owned by root that no one else may write:
 * the identity of the file (device, inode, size, mtime) and its build-id name
 * the module, and an unwinder takes a module file only for the identity it
 * read itself (symbol-module-file.h), so nothing there reaches a profile of
 * another file. Both are the files profd itself runs with: the system's.
 */

#include <systemd/sd-event.h>

#include "inflated-debug.h"
#include "symbol-cache.h"

typedef struct SystemPrewarm SystemPrewarm;

/* 'store' (the symbol store's) must outlive it; 'inflated' may be NULL. */
int system_prewarm_start(sd_event *event, const SymbolCacheStore *store, InflatedDebug *inflated,
			 SystemPrewarm **ret);
/* Waits for the work in progress. */
SystemPrewarm *system_prewarm_free(SystemPrewarm *p);
