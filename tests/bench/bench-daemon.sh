#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start profd on a private bus (as the daemon tests do) and run bench-daemon
# against it. Environment: PROFD, WORKLOAD_SPLIT, FIXTURES_DIR, BENCH_DAEMON,
# DAEMON_TEST_LIB.
source "$DAEMON_TEST_LIB"
echo "MaxRuns=2000" >"$T/profd.conf"
start_bus
start_profd
"$BENCH_DAEMON" "$BUS" "$PROFD_PID" "$FIXTURES_DIR/valid/full.json" 1000 4
