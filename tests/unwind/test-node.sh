#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# node (NodeSource's: a non-PIE executable whose V8 builtins run from a second
# mapping of its text) with --perf-basic-prof (perf map) and --perf-prof
# (jitdump file only), recorded by profctl --local and through the daemon (its
# sandboxed unwinder): at least 95% of the samples are named at the leaf, and
# node-hot.js's two hot functions by their script names, hotThree about three
# times as often as hotOne (it does three times the work on the same thread).
# usage: test-node.sh PROFCTL NODE-HOT.JS (PROFD and WORKLOAD_SPLIT in the environment)
source "$(dirname "$0")/../daemon/lib.sh"
profctl=$1
script=$2
cd "$T" # --perf-prof writes its jitdump file here

start_bus
start_profd

# check HOW FLAG: record node FLAG node-hot.js with profctl HOW (--local or --address=BUS)
check() {
	local how=$1 flag=$2 total named three one
	"$profctl" "$how" record -F 499 --no-kernel -f folded -o "$T/out.folded" -- \
		node "$flag" "$script" 4 2>"$T/err" ||
		fail "profctl $how record -- node $flag: $(cat "$T/err")"
	# leaf = the last frame of each root-first line; unnamed = "module+0x..." or "[unknown]"
	read -r total named three one < <(awk '{
		count = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		n = split(line, f, ";"); leaf = f[n]; total += count
		if (leaf !~ /\+0x[0-9a-f]+$/ && leaf !~ /^\[unknown\]/) named += count
		if (leaf ~ /hotThree .*node-hot\.js/) three += count
		if (leaf ~ /hotOne .*node-hot\.js/) one += count
	} END { print total + 0, named + 0, three + 0, one + 0 }' "$T/out.folded")
	echo "node $flag (profctl ${how%%=*}): $named of $total samples named at the leaf;" \
		"hotThree $three, hotOne $one (node-hot.js)"
	((total >= 50)) || fail "only $total samples of node $flag"
	if ((named * 100 < total * 95)); then
		echo "the unnamed leaves:" >&2
		awk '{ line = $0; sub(/ [0-9]+$/, "", line); n = split(line, f, ";")
			if (f[n] ~ /\+0x|^\[unknown\]/) print f[n], $NF }' "$T/out.folded" |
			sort -k2 -nr | head >&2
		fail "node $flag (profctl $how): only $named of $total leaves named"
	fi
	# the two are most of the work; 3:1 give or take sampling noise: from 2:1 to 4.5:1
	(((three + one) * 2 >= total)) ||
		fail "node $flag: hotThree and hotOne named by their script in only $((three + one)) of $total samples"
	((three >= one * 2 && three * 2 <= one * 9)) ||
		fail "node $flag: hotThree $three against hotOne $one samples, not about 3:1"
}

for flag in --perf-basic-prof --perf-prof; do
	check --local "$flag"
	check --address="$BUS" "$flag"
done
