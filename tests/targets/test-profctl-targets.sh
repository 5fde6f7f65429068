#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profctl --local record of targets beyond one pid: -a (the whole machine, bpf by
# default), --cgroup (perf-dwarf by default), --backend=bpf on one pid, and the
# errors of each (root needed: cgroups, system-wide events).
# Usage: test-profctl-targets.sh PROFCTL WORKLOAD_SPLIT WORKLOAD_SPLIT_FP
set -u
source "$(dirname "$0")/../test-util.sh"
profctl=$1
split=$2
split_fp=$3
tmp=$(mktemp -d)
failures=0
children=()
cgroup=

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

cleanup() {
	kill "${children[@]}" 2>/dev/null
	wait 2>/dev/null
	[ -n "$cgroup" ] && rmdir "$cgroup" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# -a for 3 s: the workload's hot function, and a second busy process (an idle machine may run
# nothing else), each folded stack under its process
"$split_fp" 60 1 &
children+=($!)
hot=$!
bash -c 'while :; do :; done' &
children+=($!)
busy=$!
wait_until 30 runs_program $hot "$split_fp" || fail "the workload did not start"
"$profctl" --local record -a -F 99 -d 3 -o "$tmp/all.folded" -o "$tmp/all.json" 2>"$tmp/err" ||
	fail "record -a: $(cat "$tmp/err")"
grep -Eq "^workload-split--$hot;.*split_heavy" "$tmp/all.folded" ||
	fail "record -a lacks the workload's split_heavy under workload-split--$hot: $(head -3 "$tmp/all.folded")"
grep -Eq "^bash-$busy;" "$tmp/all.folded" ||
	fail "record -a lacks the busy shell under bash-$busy: $(cut -d';' -f1 "$tmp/all.folded" | sort -u | head -5)"
[ "$(grep -Evc '^[^;]*-[0-9]+;' "$tmp/all.folded")" -eq 0 ] ||
	fail "record -a: a stack without its process frame: $(grep -Ev '^[^;]*-[0-9]+;' "$tmp/all.folded" | head -3)"
grep -q "no timeline" "$tmp/all.json" || fail "record -a (bpf): the Firefox profile does not say it has no timeline"
"$profctl" --local record -a -d 0.5 -f metrics -o "$tmp/all-m.json" 2>"$tmp/err" &&
	grep -q '"backend": "bpf"' "$tmp/all-m.json" ||
	fail "record -a: auto did not choose bpf: $(cat "$tmp/all-m.json" "$tmp/err")"

# --cgroup: the processes inside, DWARF-unwound by default, nothing of one outside
mount=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cgroup=$mount/profd-profctl-test-$$
mkdir "$cgroup" || fail "cannot create $cgroup"
bash -c "echo \$\$ > '$cgroup/cgroup.procs' && exec '$split' 60 1" &
children+=($!)
inside=$!
"$split" 60 1 &
children+=($!)
outside=$!
wait_until 30 runs_program $inside "$split" || fail "the workload in the cgroup did not start"
"$profctl" --local record --cgroup "$cgroup" -F 199 -d 2 -o "$tmp/cg.folded" 2>"$tmp/err" ||
	fail "record --cgroup: $(cat "$tmp/err")"
grep -Eq "^workload-split-$inside;.*main;split_worker;split_heavy" "$tmp/cg.folded" ||
	fail "record --cgroup lacks main..split_heavy of $inside: $(head -3 "$tmp/cg.folded")"
! grep -q -- "-$outside;" "$tmp/cg.folded" || fail "record --cgroup has the process outside it"
"$profctl" --local record --cgroup "$cgroup" -d 0.5 -f metrics 2>/dev/null | grep -q '"backend": "perf-dwarf"' ||
	fail "record --cgroup: auto did not choose perf-dwarf"
kill "${children[@]}" 2>/dev/null
wait 2>/dev/null
children=()

# --backend=bpf on one pid
"$split_fp" 60 2 &
children+=($!)
wait_until 30 runs_program $! "$split_fp" 2 || fail "the workload did not start"
"$profctl" --local record -p $! --backend bpf -F 199 -d 1 -o "$tmp/p.folded" 2>"$tmp/err" ||
	fail "record --backend bpf -p: $(cat "$tmp/err")"
grep -Eq "split_worker;split_heavy" "$tmp/p.folded" || fail "bpf on one pid: $(head -3 "$tmp/p.folded")"
! grep -Eq '^[^;]*-[0-9]+;' "$tmp/p.folded" || fail "bpf on one pid: stacks carry a process frame"

# errors: what failed, the subject, the cause; usage errors exit 2
check_error() { # STATUS PATTERN ARGS...
	local want=$1 pattern=$2 rc
	shift 2
	"$profctl" --local record "$@" -d 0.2 >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq "$want" ] || fail "record $*: exit $rc, want $want"
	grep -q "$pattern" "$tmp/err" || fail "record $*: message $(cat "$tmp/err")"
}
check_error 1 "cannot profile cgroup '/no-such-cgroup-$$': No such file" --cgroup /no-such-cgroup-$$
check_error 1 "cannot profile cgroup '/../x': Invalid argument" --cgroup /../x
check_error 1 "unit 'x.target': not a unit name of a type with processes" --unit x.target
check_error 2 "give one of -p PID, --cgroup, --unit, -a or a command" -a -p 1
check_error 2 "give one of" --cgroup / --unit x.service

[ $failures -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ok"
