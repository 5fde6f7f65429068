#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# JIT targets, whose symbols are in /tmp/perf-<pid>.map, under the unit (which
# gives profd a /tmp of its own): an ordinary user's process with the system's
# /tmp, and a service systemd sandboxes (a dynamic user, a private /tmp, a
# read-only file system), profiled by root.
source "$(dirname "$0")/lib.sh"

boot_system
alice=$(add_user alice)

# expect_jit FILE: most samples of the folded profile FILE (inside) are in
# jit_spin_loop; prints how many
expect_jit() {
	local jit total
	jit=$(awk '/jit_spin_loop/ { n += $NF } END { print n + 0 }' "$ROOT$1")
	total=$(awk '{ n += $NF } END { print n + 0 }' "$ROOT$1")
	((jit * 2 > total)) || fail "jit_spin_loop in $jit of $total samples: $(head -n 3 "$ROOT$1")"
	echo "jit_spin_loop in $jit of $total samples"
}

# wait_map PID [nsenter args]: the process has written its perf map
wait_map() {
	local pid=$1
	shift
	for _ in $(seq 100); do
		in_container nsenter -t "$pid" "$@" test -s "/tmp/perf-$pid.map" && return 0
		sleep 0.1
	done
	fail "process $pid wrote no /tmp/perf-$pid.map"
}

pid=$(spawn_as alice $TESTS_BIN/workload-jit 60)
wait_map "$pid" -m
out=$(as_user alice profctl record -p "$pid" -d 2 -o /home/alice/jit.folded 2>&1) ||
	fail "uid $alice cannot profile her JIT process $pid: $out"
ok "uid $alice profiled her JIT (its map in the system's /tmp): $(expect_jit /home/alice/jit.folded)"

in_container systemd-run --quiet --unit=jit.service -p DynamicUser=yes -p PrivateTmp=yes \
	-p ProtectSystem=strict -p ProtectHome=yes $TESTS_BIN/workload-jit 60 ||
	fail "cannot start jit.service"
pid=$(in_container systemctl show -P MainPID jit.service)
uid=$(in_container stat -c %u /proc/$pid)
wait_map "$pid" -m
in_container test ! -e /tmp/perf-$pid.map || fail "jit.service's perf map is not private"
out=$(in_container profctl record -p "$pid" -d 2 -o /root/jit.folded 2>&1) ||
	fail "root cannot profile jit.service (pid $pid, uid $uid): $out"
ok "root profiled jit.service (dynamic uid $uid, private /tmp): $(expect_jit /root/jit.folded)"
