# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the whole-machine benchmarks (bench-system.sh, bench-churn.sh), sourced: the
# daemon tests' lib (DAEMON_TEST_LIB), and profd in a cgroup of its own, whose cpu.stat
# counts the CPU of profd and its unwinders. At exit, also after a failure, the benchmark's
# bench_undo (by default nothing) runs, its processes and profd are killed and the cgroup
# removed, before the daemon lib's cleanup. Their files go to $tmp.
source "$DAEMON_TEST_LIB"

PROFD_CG=
tmp=$T/bench
mkdir -p "$tmp"

# kill_and_wait PID...: each of them killed and reaped
kill_and_wait() {
	local p
	for p in "$@"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

bench_undo() { :; }

bench_cleanup() {
	local rc=$?
	bench_undo
	kill_and_wait "${CHILDREN[@]}" $PROFD_PID
	PROFD_PID=
	[[ -z $PROFD_CG ]] || rmdir "$PROFD_CG" 2>/dev/null
	(exit $rc)
	cleanup
}
trap bench_cleanup EXIT

# start_profd_in_cgroup NAME: start_profd in a new cgroup profd-bench-NAME-PID
start_profd_in_cgroup() {
	local mount
	mount=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	mkdir "$mount/profd-bench-$1-$$" || fail "cannot create cgroup $mount/profd-bench-$1-$$"
	PROFD_CG=$mount/profd-bench-$1-$$
	PROFD_WRAPPER=(bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$PROFD_CG")
	start_profd
}

# profd_usec: the CPU profd and its unwinders have used so far, in microseconds
profd_usec() { sed -n 's/^usage_usec //p' "$PROFD_CG/cpu.stat"; }

# perf_samples FILE: the number of samples in perf record's $tmp/FILE, one line a sample
# (perf report --header-only of perf 6.1 no longer prints "# Samples")
perf_samples() {
	perf script -i "$tmp/$1" -F tid 2>/dev/null | wc -l
}
