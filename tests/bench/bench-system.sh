#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whole-machine sampling at 99 Hz on every CPU for SECONDS (default 60): the CPU
# that profctl record -a costs with the bpf backend, through profd and with
# --local, and with perf-dwarf (--local), next to `perf record -a -g` and then
# `perf report` of what it recorded, while two busy workloads keep both CPUs
# running.
# Round 1 starts them all together over the same window: profd's first bpf
# session (cold: no module named yet), --local bpf, --local perf-dwarf and perf
# record. Round 2 is a second profd session (warm: profd keeps its symbol
# cache across sessions) beside a second perf record.
# Each tool's CPU is its own user + system time (rusage: for profctl --local
# everything, loading the program, reading /proc, naming every stack at the
# end); profd's is the growth of its cgroup's cpu.stat usage over the session
# (profd and its helpers). The bpf program's own time runs in the kernel on the
# sampled tasks' account: it is reported apart, from kernel.bpf_stats_enabled,
# switched on for the run. The sessions' metrics split profctl's and profd's
# bpf CPU into setup, naming at the end, and the rest (periodic reads).
# Usage: bench-system.sh PROFCTL WORKLOAD_SPLIT [SECONDS]   (root; PROFD and
# DAEMON_TEST_LIB in the environment)
source "$(dirname "${BASH_SOURCE[0]}")/profd-cgroup.sh"
set +e
profctl=$1
workload=$2
seconds=${3:-${BENCH_SECONDS:-60}}
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
bench_undo() { echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null; }

# "user system" seconds of a command, from GNU time
measure() { # NAME CMD...
	local name=$1
	shift
	/usr/bin/time -f "%U %S" -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}
cpu_of() { awk 'END { printf "%.3f", $1 + $2 }' "$tmp/$1.time"; } # the last line: GNU time may say how it exited first

# profd_session NAME: profctl record -a through profd; profd's CPU into NAME.time as "0 S"
profd_session() {
	local before after
	before=$(profd_usec)
	"$profctl" --address="$BUS" record -a -F 99 -d "$seconds" --backend bpf -f metrics \
		-o "$tmp/$1.json" >"$tmp/$1.out" 2>"$tmp/$1.err"
	after=$(profd_usec)
	awk -v a="$before" -v b="$after" 'BEGIN { printf "0 %.6f\n", (b - a) / 1e6 }' >"$tmp/$1.time"
}

start_bus
start_profd_in_cgroup system
for _ in 1 2; do
	"$workload" $((2 * seconds + 60)) 1 &
	CHILDREN+=($!)
done
echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null

# round 1: profd cold, --local bpf, --local perf-dwarf, perf record, side by side
profd_session profd_cold &
cold=$!
measure bpf "$profctl" --local record -a -F 99 -d "$seconds" --backend bpf -f metrics \
	-o "$tmp/bpf.json" &
bpf=$!
measure dwarf "$profctl" --local record -a -F 99 -d "$seconds" --backend perf-dwarf -f metrics \
	-o "$tmp/dwarf.json" &
dwarf=$!
measure perf_record perf record -a -g -F 99 -o "$tmp/perf.data" -- sleep "$seconds" &
perf=$!
wait $cold $bpf $dwarf $perf
measure perf_report perf report -i "$tmp/perf.data" --stdio
# round 2: profd warm beside perf record
profd_session profd_warm &
warm=$!
measure perf_record2 perf record -a -g -F 99 -o "$tmp/perf2.data" -- sleep "$seconds" &
perf2=$!
wait $warm $perf2
measure perf_report2 perf report -i "$tmp/perf2.data" --stdio

field() { sed -n "s/^ *\"$2\": \\([0-9.]*\\),*$/\\1/p" "$tmp/$1.json"; }
share() { awk -v c="$1" -v s="$seconds" 'BEGIN { printf "%.3f%%", c * 100 / s }'; }
row() { printf "%-36s %8s %8s %9s  %s\n" "$1" "$2" "$(share "$2")" "${3:-}" "${4:-}"; }
sum() { awk -v a="$(cpu_of "$1")" -v b="$(cpu_of "$2")" 'BEGIN { printf "%.3f", a + b }'; }
# "setup S, naming S, rest S" of a bpf session's metrics (the rest: periodic reads, side band)
split() {
	awk -v t="$(field "$1" collector_cpu_nanos)" -v s="$(field "$1" bpf_setup_cpu_nanos)" \
		-v n="$(field "$1" bpf_naming_cpu_nanos)" 'BEGIN {
		printf "setup %.3f s, naming %.3f s, rest %.3f s", s / 1e9, n / 1e9, (t - s - n) / 1e9 }'
}

printf "whole machine, 99 Hz on %d CPUs, %d s, two busy workloads; CPU as a share of one CPU\n" \
	"$(nproc)" "$seconds"
printf "load average at the end: %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-36s %8s %8s %9s  %s\n" "" "CPU s" "share" "samples" "where (from the metrics)"
echo "round 1, side by side:"
row "profd -a, bpf, first session (cold)" "$(cpu_of profd_cold)" \
	"$(field profd_cold samples_captured)" "$(split profd_cold)"
row "profctl --local -a, bpf" "$(cpu_of bpf)" "$(field bpf samples_captured)" "$(split bpf)"
row "profctl --local -a, perf-dwarf" "$(cpu_of dwarf)" "$(field dwarf samples_captured)" \
	"$(field dwarf samples_dropped) dropped"
row "perf record -a -g" "$(cpu_of perf_record)" "$(perf_samples perf.data)"
row "perf report" "$(cpu_of perf_report)"
row "perf record + report" "$(sum perf_record perf_report)"
echo "round 2, side by side:"
row "profd -a, bpf, second session (warm)" "$(cpu_of profd_warm)" \
	"$(field profd_warm samples_captured)" "$(split profd_warm)"
row "perf record -a -g" "$(cpu_of perf_record2)" "$(perf_samples perf2.data)"
row "perf report" "$(cpu_of perf_report2)"
row "perf record + report" "$(sum perf_record2 perf_report2)"
for s in profd_cold bpf profd_warm; do
	runs=$(field $s bpf_program_runs)
	nanos=$(field $s bpf_program_nanos)
	if [ "${runs:-0}" -gt 0 ] 2>/dev/null; then
		awk -v w="$s" -v r="$runs" -v n="$nanos" -v s="$seconds" 'BEGIN {
			printf "%s: bpf program in the kernel: %d runs, %.0f ns each, %.3f%% of one CPU\n",
			       w, r, n / r, n / 1e7 / s }'
	fi
done
printf "dropped: bpf %s, perf-dwarf %s; lost stacks (bpf) %s; truncated stacks: bpf %s, perf-dwarf %s\n" \
	"$(field bpf samples_dropped)" "$(field dwarf samples_dropped)" "$(field bpf lost_stacks)" \
	"$(field bpf truncated_stacks)" "$(field dwarf truncated_stacks)"
for s in profd_cold profd_warm; do
	[ -s "$tmp/$s.json" ] || echo "$s: no metrics: $(cat "$tmp/$s.err")"
done
