#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A target in a container: its own mount and pid namespaces, its executable at
# a path that exists only there (a directory bind-mounted over /opt in its
# mount namespace). profctl record names its stacks all the same, in-process
# and through the daemon, reading the file through /proc/PID/root.
# usage: test-container.sh PROFCTL WORKLOAD_SPLIT (PROFD in the environment)
source "$(dirname "$0")/../daemon/lib.sh"
profctl=$1
workload=$2

tmp=$T
start_bus
start_profd

inner=/opt/profd-container-$$/workload-in-container
[[ ! -e $inner ]] || fail "$inner exists outside the container"
mkdir -p "$tmp/opt/profd-container-$$"
cp "$workload" "$tmp/opt/profd-container-$$/workload-in-container"
unshare --mount --pid --fork --propagation private \
	sh -c 'mount --bind "$0" /opt && exec "$1" 300 1' "$tmp/opt" "$inner" &
ns=$!
CHILDREN+=("$ns")
# the workload is the child unshare forked, pid 1 of its namespace
in_container() {
	pid=$(cat /proc/$ns/task/*/children 2>/dev/null | tr -s ' ' '\n' | head -n 1)
	[[ -n $pid ]] && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$inner" ]] && has_run "$pid" 5
}
wait_until 30 in_container || fail "the workload did not start in its namespaces"
CHILDREN+=("$pid") # unshare's end does not end it
[[ ! -e $inner ]] || fail "$inner is visible outside the container"

for how in --local --address="$BUS"; do
	out=$("$profctl" "$how" record -p "$pid" -d 2 -F 999 --no-kernel -f folded) ||
		fail "profctl $how record failed"
	named=$(grep -Ec '^(_start;)?.*main;split_worker;split_heavy(;workload_mix)? [0-9]+$' <<<"$out" || true)
	unnamed=$(grep -c 'workload-in-container+0x' <<<"$out" || true)
	echo "$how: $named stacks from main to split_heavy, $unnamed frames left as module+offset"
	((named > 0 && unnamed == 0)) ||
		fail "profctl $how record did not name the container's executable; it wrote: $(head -5 <<<"$out")"
done
