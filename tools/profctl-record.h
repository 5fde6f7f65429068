/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "export.h"
#include "held-child.h"
#include "profctl.h"
#include "sampling-session.h"

/* Several -o give several formats of one session; each name picks its format. */
#define RECORD_MAX_OUTPUTS 8

typedef struct RecordOutput {
	const char *path; /* NULL: stdout */
	ExportFormat format;
} RecordOutput;

typedef struct RecordArgs {
	pid_t pid;           /* 0 with a command */
	char **command;      /* NULL with -p */
	SamplingOptions options;
	bool duration_given; /* -d; a command otherwise runs up to the ceiling */
	bool kernel_given;   /* --no-kernel */
	RecordOutput outputs[RECORD_MAX_OUTPUTS]; /* at least one */
	size_t n_outputs;
} RecordArgs;

/* Sample through profd: StartSession, progress, Ctrl-C -> Stop, ExportToFd, Release. */
int record_through_daemon(const ProfctlContext *ctx, const RecordArgs *a, HeldChild *child);

/* Live progress on stderr when it is a terminal: elapsed/total, samples, dropped. */
void record_progress(double elapsed, double total, uint64_t samples, uint64_t dropped, bool final);

/* Report how the command of `record -- CMD` ended; returns 0 after a clean exit. */
int record_report_child(HeldChild *child, char *const *command);
