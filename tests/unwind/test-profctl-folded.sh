#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profctl record --local -f folded: root-first stacks named by the stack
# resolver, reaching main, in both perf-dwarf and perf-fp.
# usage: test-profctl-folded.sh PROFCTL WORKLOAD_SPLIT
set -eu
source "$(dirname "$0")/../test-util.sh"
profctl=$1
workload=$2

"$workload" 60 1 & # outlives the test however slow a loaded machine makes it
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
wait_until 30 runs_program $pid "$workload" || { echo "FAIL: the workload did not start" >&2; exit 1; }

out=$("$profctl" --local record -p "$pid" -d 2 -F 999 -f folded)
if ! grep -Eq '^(_start;)?.*main;split_worker;split_heavy(;workload_mix)? [0-9]+$' <<<"$out"; then
	echo "FAIL: perf-dwarf folded output has no named stack from main to split_heavy; it starts:" >&2
	head -5 <<<"$out" >&2
	exit 1
fi

# frame pointers are absent in the workload: perf-fp still names the leaf
out=$("$profctl" --local record -p "$pid" -d 1 -F 999 --backend=perf-fp -f folded)
if ! grep -Eq 'split_(heavy|light)(;workload_mix)? [0-9]+$' <<<"$out"; then
	echo "FAIL: perf-fp folded output does not name split_heavy/split_light; it starts:" >&2
	head -5 <<<"$out" >&2
	exit 1
fi
