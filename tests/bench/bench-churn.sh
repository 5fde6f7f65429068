#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whole-machine sessions in a steady window and in a process-churning one: what
# a `profctl record -a` session costs profd and its unwinder per sample, and
# how many of the window's samples it names, with `perf record -a -g` over the
# same window as the reference for the number of samples.
# Each round runs one profd session (BACKENDS, default "bpf perf-fp
# perf-dwarf") beside perf record while two busy workloads run; the churning
# round adds CHURNERS shell loops that fork and exec /bin/true continuously.
# profd's CPU is the growth of its cgroup's cpu.stat usage over the session
# (profd and its unwinder); "named" is the share of the profile's samples whose
# leaf frame has a function name (not module+0xADDR, not a bare address).
# Usage: bench-churn.sh PROFCTL WORKLOAD_SPLIT [SECONDS]   (root; PROFD and
# DAEMON_TEST_LIB in the environment)
source "$DAEMON_TEST_LIB"
set +e
profctl=$1
workload=$2
seconds=${3:-${BENCH_SECONDS:-8}}
backends=${BACKENDS:-bpf perf-fp perf-dwarf}
churners=${CHURNERS:-2}
tmp=$T/bench
mkdir -p "$tmp"
mount=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cg=$mount/profd-bench-churn-$$
CHURN=()

bench_cleanup() {
	local rc=$?
	for p in "${CHURN[@]}" "${CHILDREN[@]}" $PROFD_PID; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	PROFD_PID=
	rmdir "$cg" 2>/dev/null
	(exit $rc)
	cleanup
}
trap bench_cleanup EXIT

profd_usec() { sed -n 's/^usage_usec //p' "$cg/cpu.stat"; }
field() { sed -n "s/^ *\"$2\": \\([0-9.]*\\),*$/\\1/p" "$tmp/$1.json" | head -1; }
perf_samples() {
	perf script -i "$tmp/$1" -F tid 2>/dev/null | wc -l
}

# session NAME BACKEND: profd's session (metrics and folded) beside perf record
session() {
	local before after perf
	perf record -a -g -F 99 -o "$tmp/$1.perf" -- sleep "$seconds" >/dev/null 2>&1 &
	perf=$!
	before=$(profd_usec)
	"$profctl" --address="$BUS" record -a -F 99 -d "$seconds" --backend "$2" \
		-o "$tmp/$1.folded" >"$tmp/$1.out" 2>"$tmp/$1.err"
	after=$(profd_usec)
	wait $perf
	"$profctl" --address="$BUS" export "$(sed -n 's/^<6>session \([0-9a-f]*\): .*/\1/p' "$T/profd.log" | tail -1)" \
		-f metrics -o "$tmp/$1.json" 2>>"$tmp/$1.err"
	awk -v a="$before" -v b="$after" 'BEGIN { printf "%.3f", (b - a) / 1e6 }' >"$tmp/$1.cpu"
}

# the share of a folded profile's samples whose leaf is named
named_share() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); leaf = f[k]
	       total += n; if (leaf !~ /\+0x[0-9a-f]+$/ && leaf !~ /^0x[0-9a-f]+$/ && leaf != "[unknown]") named += n }
	     END { if (total) printf "%.3f", named / total; else printf "-" }' "$tmp/$1.folded" 2>/dev/null
}

report() { # NAME
	local cpu samples perf
	cpu=$(cat "$tmp/$1.cpu")
	samples=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/$1.folded" 2>/dev/null)
	perf=$(perf_samples "$1.perf")
	printf "%-22s %8s %8s %8s %10s %7s %6s %s\n" "$1" "$cpu" "${samples:--}" "${perf:--}" \
		"$(awk -v c="$cpu" -v s="${samples:-0}" 'BEGIN { if (s > 0) printf "%.1f", c * 1e6 / s; else printf "-" }')" \
		"$(awk -v s="${samples:-0}" -v p="${perf:-0}" 'BEGIN { if (p > 0) printf "%.3f", s / p; else printf "-" }')" \
		"$(named_share "$1")" \
		"thr $(field "$1" consumer_throttled_nanos) dropped $(field "$1" samples_dropped)/$(field "$1" backlog_dropped) unrec $(field "$1" samples_unrecorded)"
	[ -s "$tmp/$1.json" ] || echo "  $1: no metrics: $(grep -v '^ \|^stack quality' "$tmp/$1.err" | head -c 300)"
}

mkdir "$cg" || fail "cannot create cgroup $cg"
PROFD_WRAPPER=(bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg")
start_bus
start_profd
for _ in 1 2; do
	"$workload" 100000 1 &
	CHILDREN+=($!)
done

printf "whole machine, 99 Hz on %d CPUs, %d s a session, two busy workloads, %d churners\n" \
	"$(nproc)" "$seconds" "$churners"
printf "%-22s %8s %8s %8s %10s %7s %6s %s\n" session "CPU s" samples perf "us/sample" "s/perf" named notes
for b in $backends; do
	session "steady-$b" "$b"
	report "steady-$b"
	for _ in $(seq "$churners"); do
		bash -c 'while :; do /bin/true; done' &
		CHURN+=($!)
	done
	before=$(awk '/^processes/ { print $2 }' /proc/stat)
	session "churn-$b" "$b"
	after=$(awk '/^processes/ { print $2 }' /proc/stat)
	report "churn-$b"
	echo "  processes created in the churn session: $((after - before))"
	for p in "${CHURN[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	CHURN=()
done
[ -z "${BENCH_KEEP:-}" ] || cp -a "$tmp" "$BENCH_KEEP"
printf "load average at the end: %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
