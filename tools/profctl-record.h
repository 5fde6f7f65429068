/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

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
	pid_t pid;           /* 0 with a command or another target */
	char **command;      /* NULL with -p */
	const char *cgroup;  /* --cgroup: a cgroup2 path */
	const char *unit;    /* --unit: a systemd unit */
	bool system;         /* -a: the whole machine */
	SamplingOptions options;
	bool duration_given; /* -d; a command otherwise runs up to the ceiling */
	bool kernel_given;   /* --no-kernel */
	bool stages;         /* --stages: CMD opens its own live run (libprofd-live) */
	RecordOutput outputs[RECORD_MAX_OUTPUTS]; /* at least one */
	size_t n_outputs;
} RecordArgs;

/* Sample through profd: StartSession, progress, Ctrl-C -> Stop, ExportToFd, Release. */
int record_through_daemon(const ProfctlContext *ctx, const RecordArgs *a, HeldChild *child);

/* record --stages -- CMD: CMD is told where profd is and opens its own live run; then the outputs. */
int record_stages(const ProfctlContext *ctx, const RecordArgs *a);

/* ExportToFd of session 'path' into one output; prints what failed. */
int record_export_output(sd_bus *bus, const RecordOutput *o, const char *path);

/* Live progress on stderr when it is a terminal: elapsed/total, samples, dropped. */
void record_progress(double elapsed, double total, uint64_t samples, uint64_t dropped, bool final);

/*
 * Say on stderr which part of the request a ceiling cut ('hz_ceiling', 'duration_ceiling' name
 * them): the profile then covers less than the user asked for. Nothing when nothing was cut.
 */
void record_report_clamp(const RecordArgs *a, uint32_t hz, uint64_t duration_nanos,
			 const char *hz_ceiling, const char *duration_ceiling);
/* Report how the command of `record -- CMD` ended; returns 0 after a clean exit. */
int record_report_child(HeldChild *child, char *const *command);

/* What the session samples, for messages: "pid 1234", "cgroup /x", "unit foo.service", "the system". */
const char *record_target_text(const RecordArgs *a, pid_t pid, char *buf, size_t size);
