/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "recorded-files.h"

#include <errno.h>
#include <stddef.h>

int recorded_files_open(const TargetFileRequest *request, void *userdata)
{
	const RecordedFiles *files = userdata;
	const TargetFileOpener *inner = files->inner ?: &target_file_opener_default;
	const ProcessMapping *m;
	int fd;

	if (request->kind != TARGET_FILE_MAPPED || !files->processes)
		return target_file_opener_open(inner, request);
	m = process_table_find_mapping(files->processes, request->pid, request->address);
	if (!m)
		/* not in the records (a mapping older than the session): ask the process itself */
		return target_file_opener_open(inner, request);
	fd = target_file_open_mapped(request->pid, m, m->path);
	return fd == -ENOENT ? target_file_opener_open(inner, request) : fd;
}
