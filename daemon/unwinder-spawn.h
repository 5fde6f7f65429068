/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Start a profd-unwinder: a child with its socket (SOCK_SEQPACKET) as
 * descriptor 3 and no other descriptor but stdin/out/err, under 'memory_bytes'
 * of address space (0: none; sanitizer builds never get one), no core dumps,
 * killed when profd dies, with every capability dropped and NO_NEW_PRIVS set
 * before it is executed, so not even uid 0 regains anything by exec. It
 * installs its own seccomp filter and Landlock domain (unwinder-sandbox.h).
 */

#include <stdint.h>
#include <sys/types.h>

/* Our end of its socket in *ret_sock, its pid and a pidfd (its parent reaps it). */
int unwinder_spawn(const char *path, uint64_t memory_bytes, pid_t *ret_pid, int *ret_pidfd,
		   int *ret_sock);
