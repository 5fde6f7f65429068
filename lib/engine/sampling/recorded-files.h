/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A TargetFileOpener (target-files.h) for targets whose mappings profd knows
 * from the kernel's records rather than from a process that is still there to
 * ask: the processes of a cgroup or of the whole machine, which come and go,
 * and the bpf backend, which names its stacks once sampling has ended. A
 * mapped file is looked up in the session's ProcessTable by pid and address
 * and opened as that very file (device and inode of the record); every other
 * kind of request goes to the inner opener.
 */

#include "process-table.h"
#include "target-files.h"

typedef struct RecordedFiles {
	const ProcessTable *processes; /* borrowed; may be set after the opener is handed out */
	const TargetFileOpener *inner; /* NULL: target_file_opener_default */
} RecordedFiles;

/* TargetFileOpenFn; 'userdata' is a RecordedFiles. */
int recorded_files_open(const TargetFileRequest *request, void *userdata);
