/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The identity of a sampling session's run record (DESIGN.md §6):
 * detector_digest is the build-id of the target's executable and
 * config_digest a digest of the effective request.
 */

#include <sys/types.h>

#include "record.h"
#include "session.h"

/* Lower-case hex GNU build-id of /proc/<pid>/exe; -ENODATA when it has none. */
int target_build_id(pid_t pid, char **ret);

/*
 * The request as one canonical line ("hz=99 duration_usec=... ..."), and its
 * digest: FNV-1a 64 in hex, enough to tell configurations apart (not a
 * security boundary).
 */
int session_request_digest(const SessionRequest *req, uint32_t hz, uint64_t duration_usec,
			   char **ret);

/* Everything but the run recorder's own fields, for run_recorder_new(). */
int session_identity_new(const SessionRequest *req, const char *comm, uint32_t hz,
			 uint64_t duration_usec, RunIdentity *ret);
