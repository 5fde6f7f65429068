#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# pprof exports true to the process: the executable as mapping 1 (kernel
# frames included), one mapping per file with its runtime range and file
# offset, and location addresses that name the same functions when resolved
# from the files alone (check-pprof-mappings.py, through go tool pprof -raw).
# A PIE, a non-PIE executable running code from a second mapping of its text,
# and a C++ program.
# usage: test-pprof-mappings.sh PROFCTL CHECKER WORKLOAD...
set -eu
source "$(dirname "$0")/../test-util.sh"
profctl=$1
checker=$2
shift 2
T=$(mktemp -d /tmp/profd-pprof-mappings.XXXXXX)
pid=
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; rm -rf "$T"' EXIT
export HOME=$T # go tool pprof keeps state there

for workload in "$@"; do
	"$workload" 60 & # outlives its record however slow a loaded machine makes it
	pid=$!
	wait_until 30 runs_program $pid "$workload" || { echo "FAIL: $workload did not start" >&2; exit 1; }
	"$profctl" --local record -p "$pid" -d 1.5 -F 499 -f pprof -o "$T/p.pb.gz"
	kill $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	pid=
	go tool pprof -raw -symbolize=none "$T/p.pb.gz" >"$T/raw" 2>"$T/err" ||
		{ echo "FAIL: go tool pprof cannot read the profile of $workload: $(cat "$T/err")" >&2; exit 1; }
	python3 "$checker" "$workload" <"$T/raw" ||
		{ echo "FAIL: pprof mappings of $workload; go tool pprof -raw says:" >&2; sed -n '/^Mappings/,$p' "$T/raw" >&2; exit 1; }
	echo "ok - $(basename "$workload"): pprof mappings true to the process"
done
