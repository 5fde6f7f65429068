#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whole-machine sessions in a steady window and in a process-churning one: what
# a `profctl record -a` session costs profd and its unwinder per sample, and
# how many of the window's samples it names, with `perf record -a -g` over the
# same window as the reference for the number of samples.
# Each round runs one profd session (BACKENDS, default "bpf perf-fp
# perf-dwarf") beside perf record while two busy workloads run; the churning
# round adds CHURNERS shell loops that fork and exec CHURN_CMD (default
# /bin/true) continuously; a compiler (CHURN_CMD='cc -c -x c /dev/null -o
# /dev/null') maps large binaries afresh in every process, as a build does.
# profd's CPU is the growth of its cgroup's cpu.stat usage over the session
# (profd and its unwinder); "named" is the share of the profile's samples whose
# leaf frame has a function name (not module+0xADDR, not a bare address), next
# to the share of perf's samples whose leaf perf script names; "VM MiB" the
# most the unwinder had mapped during the session (its RLIMIT_AS is 4 GiB).
# Usage: bench-churn.sh PROFCTL WORKLOAD_SPLIT [SECONDS]   (root; PROFD and
# DAEMON_TEST_LIB in the environment)
source "$(dirname "${BASH_SOURCE[0]}")/profd-cgroup.sh"
set +e
profctl=$1
workload=$2
seconds=${3:-${BENCH_SECONDS:-8}}
backends=${BACKENDS:-bpf perf-fp perf-dwarf}
churners=${CHURNERS:-2}
churn_cmd=${CHURN_CMD:-/bin/true}
CHURN=()

stop_churners() {
	kill_and_wait "${CHURN[@]}"
	CHURN=()
}
bench_undo() { stop_churners; }

# the most the unwinder (of uid 0) had mapped, in MiB, polled until killed
watch_unwinder() {
	local u kb peak=0
	while :; do
		u=$(pgrep -P "$PROFD_PID" -x profd-unwinder | head -1)
		kb=$(awk '/^VmSize/ { print $2 }' "/proc/$u/status" 2>/dev/null)
		((${kb:-0} > peak)) && { peak=$kb; echo $((peak / 1024)) >"$1"; }
		sleep 0.2
	done
}

# session NAME BACKEND: profd's session (folded) beside perf record
session() {
	local before after perf watch
	echo - >"$tmp/$1.vm"
	watch_unwinder "$tmp/$1.vm" &
	watch=$!
	perf record -a -g -F 99 -o "$tmp/$1.perf" -- sleep "$seconds" >/dev/null 2>&1 &
	perf=$!
	before=$(profd_usec)
	"$profctl" --address="$BUS" record -a -F 99 -d "$seconds" --backend "$2" \
		-o "$tmp/$1.folded" >"$tmp/$1.out" 2>"$tmp/$1.err"
	after=$(profd_usec)
	wait $perf
	kill $watch
	wait $watch 2>/dev/null
	awk -v a="$before" -v b="$after" 'BEGIN { printf "%.3f", (b - a) / 1e6 }' >"$tmp/$1.cpu"
}

# the share of a folded profile's samples whose leaf is named
named_share() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); leaf = f[k]
	       total += n; if (leaf !~ /\+0x[0-9a-f]+$/ && leaf !~ /^0x[0-9a-f]+$/ && leaf != "[unknown]") named += n }
	     END { if (total) printf "%.3f", named / total; else printf "-" }' "$tmp/$1.folded" 2>/dev/null
}

# the same of perf's samples: a line of its comm, then (a tab first) its leaf frame
perf_named_share() {
	perf script -i "$tmp/$1" -F comm,ip,sym --max-stack=1 2>/dev/null | awk '
		NF == 0 { next }
		/^\t/ { if ($2 != "[unknown]") named++; next }
		{ total++ }
		END { if (total) printf "%.3f", named / total; else printf "-" }'
}

report() { # NAME
	local cpu samples perf
	cpu=$(cat "$tmp/$1.cpu")
	samples=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/$1.folded" 2>/dev/null)
	perf=$(perf_samples "$1.perf")
	printf "%-22s %8s %8s %8s %10s %7s %6s %6s %8s\n" "$1" "$cpu" "${samples:--}" "${perf:--}" \
		"$(awk -v c="$cpu" -v s="${samples:-0}" 'BEGIN { if (s > 0) printf "%.1f", c * 1e6 / s; else printf "-" }')" \
		"$(awk -v s="${samples:-0}" -v p="${perf:-0}" 'BEGIN { if (p > 0) printf "%.3f", s / p; else printf "-" }')" \
		"$(named_share "$1")" "$(perf_named_share "$1.perf")" "$(cat "$tmp/$1.vm")"
	[ -s "$tmp/$1.folded" ] || echo "  $1: no profile: $(grep -v '^ \|^stack quality' "$tmp/$1.err" | head -c 300)"
}

start_bus
start_profd_in_cgroup churn
for _ in 1 2; do
	"$workload" 100000 1 &
	CHILDREN+=($!)
done

printf "whole machine, 99 Hz on %d CPUs, %d s a session, two busy workloads, %d churners of '%s'\n" \
	"$(nproc)" "$seconds" "$churners" "$churn_cmd"
printf "%-22s %8s %8s %8s %10s %7s %6s %6s %8s\n" session "CPU s" samples perf "us/sample" "s/perf" named "perf" "VM MiB"
for b in $backends; do
	session "steady-$b" "$b"
	report "steady-$b"
	for _ in $(seq "$churners"); do
		bash -c "while :; do $churn_cmd; done" >/dev/null 2>&1 &
		CHURN+=($!)
	done
	before=$(awk '/^processes/ { print $2 }' /proc/stat)
	session "churn-$b" "$b"
	after=$(awk '/^processes/ { print $2 }' /proc/stat)
	report "churn-$b"
	echo "  processes created in the churn session: $((after - before))"
	stop_churners
done
[ -z "${BENCH_KEEP:-}" ] || cp -a "$tmp" "$BENCH_KEEP"
printf "load average at the end: %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
