#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whole-machine sampling at 99 Hz on every CPU for SECONDS (default 60): the CPU
# that profctl --local record -a costs with the bpf backend and with perf-dwarf,
# next to `perf record -a -g` and then `perf report` of what it recorded. All
# three sample the same window side by side (started together), while two busy
# workloads keep both CPUs running; each one's CPU is its own user + system
# time (rusage of the process, which for profctl includes loading the program,
# reading /proc, and naming every stack at the end). The bpf program's own
# time runs in the kernel on the sampled tasks' account: it is reported
# separately, from kernel.bpf_stats_enabled, switched on for the run.
# Usage: bench-system.sh PROFCTL WORKLOAD_SPLIT [SECONDS]   (root)
set -u
profctl=$1
workload=$2
seconds=${3:-${BENCH_SECONDS:-60}}
tmp=$(mktemp -d)
children=()
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)

cleanup() {
	kill "${children[@]}" 2>/dev/null
	wait 2>/dev/null
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# "user system" seconds of a command, from GNU time
measure() { # NAME CMD...
	local name=$1
	shift
	/usr/bin/time -f "%U %S" -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}
cpu_of() { awk '{ printf "%.3f", $1 + $2 }' "$tmp/$1.time"; }

for _ in 1 2; do
	"$workload" $((seconds + 30)) 1 &
	children+=($!)
done
echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null

measure bpf "$profctl" --local record -a -F 99 -d "$seconds" --backend bpf -f metrics \
	-o "$tmp/bpf.json" &
bpf=$!
measure dwarf "$profctl" --local record -a -F 99 -d "$seconds" --backend perf-dwarf -f metrics \
	-o "$tmp/dwarf.json" &
dwarf=$!
measure perf_record perf record -a -g -F 99 -o "$tmp/perf.data" -- sleep "$seconds" &
perf=$!
wait $bpf $dwarf $perf
measure perf_report perf report -i "$tmp/perf.data" --stdio

field() { sed -n "s/^ *\"$2\": \\([0-9.]*\\),*$/\\1/p" "$tmp/$1.json"; }
perf_samples=$(perf report -i "$tmp/perf.data" --stdio --header-only 2>/dev/null |
	sed -n 's/^# Samples: *\([0-9.]*\)\([kKM]*\) .*/\1\2/p' | head -1)

share() { awk -v c="$1" -v s="$seconds" 'BEGIN { printf "%.3f%%", c * 100 / s }'; }
row() { printf "%-34s %10s %10s %10s\n" "$1" "$2" "$(share "$2")" "${3:-}"; }
total=$(awk -v a="$(cpu_of perf_record)" -v b="$(cpu_of perf_report)" 'BEGIN { printf "%.3f", a + b }')

printf "whole machine, 99 Hz on %d CPUs, %d s, two busy workloads; CPU as a share of one CPU\n" \
	"$(nproc)" "$seconds"
printf "%-34s %10s %10s %10s\n" "" "CPU s" "share" "samples"
row "profctl --local -a, bpf" "$(cpu_of bpf)" "$(field bpf samples_captured)"
row "profctl --local -a, perf-dwarf" "$(cpu_of dwarf)" "$(field dwarf samples_captured)"
row "perf record -a -g" "$(cpu_of perf_record)" "${perf_samples:-?}"
row "perf report" "$(cpu_of perf_report)"
row "perf record + report" "$total"
runs=$(field bpf bpf_program_runs)
nanos=$(field bpf bpf_program_nanos)
if [ "${runs:-0}" -gt 0 ] 2>/dev/null; then
	awk -v r="$runs" -v n="$nanos" -v s="$seconds" 'BEGIN {
		printf "bpf program in the kernel: %d runs, %.0f ns each, %.3f%% of one CPU\n", r, n / r,
		       n / 1e7 / s }'
fi
printf "dropped: bpf %s, perf-dwarf %s; lost stacks (bpf) %s; truncated stacks: bpf %s, perf-dwarf %s\n" \
	"$(field bpf samples_dropped)" "$(field dwarf samples_dropped)" "$(field bpf lost_stacks)" \
	"$(field bpf truncated_stacks)" "$(field dwarf truncated_stacks)"
