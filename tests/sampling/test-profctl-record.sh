#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profctl record --local: output files, Ctrl-C, exit statuses and error messages.
# Usage: test-profctl-record.sh PROFCTL WORKLOAD_SPLIT
set -u
source "$(dirname "$0")/../test-util.sh"
profctl=$1
workload=$2
tmp=$(mktemp -d)
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

"$workload" 60 2 & # outlives the test however slow a loaded machine makes it
target=$!
trap 'kill $target 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
wait_until 30 runs_program $target "$workload" 2 || fail "the workload did not start"

# metrics to a file
"$profctl" --local record -p "$target" -F 499 -d 0.5 -f metrics -o "$tmp/m.json" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "metrics: exit $rc: $(cat "$tmp/err")"
grep -q '"backend": "perf-dwarf"' "$tmp/m.json" || fail "metrics: no backend in $(cat "$tmp/m.json")"
grep -Eq '"samples_captured": [1-9]' "$tmp/m.json" || fail "metrics: no samples in $(cat "$tmp/m.json")"
grep -q '"hz": 499' "$tmp/m.json" || fail "metrics: hz not 499"

# the format follows the file name; folded goes to stdout without -o (999 Hz: samples in 0.3 s
# even when a loaded machine gives the target a tenth of a CPU)
"$profctl" record --local -p "$target" -F 999 -d 0.3 -o "$tmp/p.folded" 2>"$tmp/err" ||
	fail "folded file: $(cat "$tmp/err")"
# --local unwinds and names functions: "...;split_worker;split_heavy 12"
grep -Eq '^([^ ;]+;)*split_(heavy|light)(;[^ ;]+)* [0-9]+$' "$tmp/p.folded" ||
	fail "folded file content: $(head -3 "$tmp/p.folded")"
"$profctl" record --local -p "$target" -F 999 -d 0.3 >"$tmp/stdout" 2>"$tmp/err" ||
	fail "folded stdout: $(cat "$tmp/err")"
[ -s "$tmp/stdout" ] || fail "nothing on stdout"

# SIGINT ends sampling early and the output is still written
"$profctl" --local record -p "$target" -d 30 -f metrics -o "$tmp/int.json" 2>"$tmp/err" &
rec=$!
# profctl handles Ctrl-C once its session is set up: interrupt it then, not at a guessed time
wait_until 30 catches_signal $rec 2 "$profctl" || fail "profctl record never got ready for Ctrl-C"
kill -INT $rec
wait $rec
rc=$?
[ $rc -eq 0 ] || fail "interrupted record: exit $rc: $(cat "$tmp/err")"
grep -q '"end_reason": "stopped"' "$tmp/int.json" || fail "interrupted: $(cat "$tmp/int.json")"

# failures and usage errors
"$profctl" --local record -p 2147483647 -o "$tmp/x.folded" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "missing pid: exit $rc"
grep -q "No such process" "$tmp/err" || fail "missing pid message: $(cat "$tmp/err")"

"$profctl" --local record -p "$target" --event cycles -d 0.2 -o "$tmp/x.folded" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then
	[ $rc -eq 1 ] || fail "cycles: exit $rc"
	grep -q "not supported here" "$tmp/err" || fail "cycles message: $(cat "$tmp/err")"
fi

"$profctl" --local record -o "$tmp/x.folded" 2>/dev/null
rc=$?
[ $rc -eq 2 ] || fail "no -p: exit $rc"
"$profctl" --local record -p "$target" -o "$tmp/x.unknownsuffix" 2>/dev/null
rc=$?
[ $rc -eq 2 ] || fail "unknown suffix: exit $rc"
"$profctl" --local record -p "$target" -F abc 2>/dev/null
rc=$?
[ $rc -eq 2 ] || fail "bad -F: exit $rc"

[ $failures -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ok"
