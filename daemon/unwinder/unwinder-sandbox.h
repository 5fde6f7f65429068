/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unwinder's own sandbox (DESIGN.md §8), installed by the unwinder itself
 * before it reads anything a caller controls: no capability (it refuses to
 * run with any), PR_SET_NO_NEW_PRIVS, a Landlock domain that allows no file
 * system access, no network and no signals out of it (where the kernel has
 * Landlock), and a seccomp allow-list without open/openat, socket, connect,
 * ptrace, process_vm_*, kill or exec: what it needs comes as descriptors
 * profd opened for it.
 */

/* 0, or a negative errno: nothing must be parsed then. 'landlock' says whether Landlock took. */
int unwinder_sandbox(int *ret_landlock_abi);
