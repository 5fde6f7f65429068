/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unwinder's work, behind its sandbox: for each session profd starts,
 * consume its backlog into a Profile with the engine's own ProfileBuilder and
 * StackResolver, asking profd for every file it needs (FILE_REQUEST; the
 * descriptor comes back), report progress, and hand the profile back as a
 * profile file in a memfd. Sessions are served in turns on one thread.
 */

/* Serve profd on 'sock' until it hangs up (0) or says something impossible (-EBADMSG). */
int unwinder_serve(int sock);
