#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# node (NodeSource's: a non-PIE executable whose V8 builtins run from a second
# mapping of its text) with --perf-basic-prof (perf map) and --perf-prof
# (jitdump file): profctl record -- node names at least 95% of the samples at
# the leaf, JavaScript functions by their script names.
# usage: test-node.sh PROFCTL NODE-HOT.JS
set -eu
profctl=$1
script=$2
T=$(mktemp -d /tmp/profd-node.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" # --perf-prof writes its jitdump file here

for flag in --perf-basic-prof --perf-prof; do
	"$profctl" --local record -F 499 --no-kernel -f folded -o "$T/out.folded" -- \
		node "$flag" "$script" 4 2>"$T/err" ||
		{ echo "FAIL: profctl record -- node $flag: $(cat "$T/err")" >&2; exit 1; }
	# leaf = the last frame of each root-first line; unnamed = "module+0x..." or "[unknown]"
	read -r total named js < <(awk '{
		count = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		n = split(line, f, ";"); leaf = f[n]; total += count
		if (leaf !~ /\+0x[0-9a-f]+$/ && leaf !~ /^\[unknown\]/) named += count
		if (leaf ~ /sumSquares .*node-hot\.js/) js += count
	} END { print total + 0, named + 0, js + 0 }' "$T/out.folded")
	echo "node $flag: $named of $total samples named at the leaf, $js in sumSquares (node-hot.js)"
	if (( total < 50 )); then
		echo "FAIL: only $total samples of node $flag" >&2
		exit 1
	fi
	if (( named * 100 < total * 95 )); then
		echo "FAIL: node $flag: only $named of $total leaves named; the unnamed ones:" >&2
		awk '{ line = $0; sub(/ [0-9]+$/, "", line); n = split(line, f, ";"); if (f[n] ~ /\+0x|^\[unknown\]/) print f[n], $NF }' "$T/out.folded" | sort -k2 -nr | head >&2
		exit 1
	fi
	if (( js * 10 < total )); then
		echo "FAIL: node $flag: sumSquares named by its script in only $js of $total samples" >&2
		exit 1
	fi
done
