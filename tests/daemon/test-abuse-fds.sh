#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Abuse: file descriptor exhaustion. A session opens one perf event per
# thread of its target and per CPU; uid 65534 profiles its own processes
# with 500 and 1000 idle threads. profd charges each session's descriptors
# before opening any: a session over MaxFdsPerSession is refused
# (LimitsExceeded), sessions past MaxFdsPerUser too (TooManySessions), so
# while uid 65534 holds all it may, uid 2 and root still start sessions,
# store runs and export into a pipe (a message carrying an fd) — nothing fails
# with EMFILE, profd never drops its bus.
source "$(dirname "$0")/lib.sh"

cpus=$(getconf _NPROCESSORS_ONLN)
medium=$((500 * cpus + 16)) # descriptors of a session on 500 threads
big=$((1000 * cpus + 16))
quota=$((2 * medium + 50))  # two medium sessions, not three
cat >"$T/profd.conf" <<EOC
[Profiler]
MaxFdsPerSession=$((medium + 100))
MaxFdsPerUser=$quota
EOC
# room for root's and uid 2's sessions besides, and profd's reserve
limit=$((4 * quota + 2048))
ulimit -n "$limit" # soft and hard
start_bus
start_profd

idle_threads() { # N: a process of uid 65534 with N idle threads, its pid in SPAWNED
	spawn "${AS_NOBODY[@]}" /usr/bin/python3 -c '
import sys, threading, time
stop = threading.Event()
for _ in range(int(sys.argv[1])):
	threading.Thread(target=stop.wait, daemon=True).start()
time.sleep(120)' "$1"
	wait_until 120 runs_program "$SPAWNED" /usr/bin/python3 $(($1 + 1)) ||
		fail "the target with $1 threads did not start them"
}
nobody_start() { # PID
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' "$1" 99 30000000 0
}
idle_threads 500
med_target=$SPAWNED
idle_threads 1000
big_target=$SPAWNED
spawn "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 60 1
other_target=$SPAWNED
spawn "$WORKLOAD_SPLIT" 60 1
root_target=$SPAWNED
mkdir -m 700 "$T/other" && chown $OTHER "$T/other"
health_before

msg=$(expect_error org.freedesktop.DBus.Error.LimitsExceeded nobody_start "$big_target")
[[ $msg == *MaxFdsPerSession* ]] || fail "the oversized session's refusal does not name the limit: $msg"
ok "a session needing $big descriptors is refused up front: $msg"

a=$(nobody_start "$med_target" | awk '{ print $3 }' | tr -d '"')
b=$(nobody_start "$med_target" | awk '{ print $3 }' | tr -d '"')
[[ -n $a && -n $b ]] || fail "uid 65534 could not start two sessions within its quota"
msg=$(expect_error org.profd.Profiler1.Error.TooManySessions nobody_start "$med_target")
[[ $msg == *MaxFdsPerUser* ]] || fail "the third session's refusal does not name the quota: $msg"
held=$(profd_fds)
((held >= 2 * 500 * cpus && held < limit)) || fail "profd holds $held fds of $limit"
ok "uid 65534 holds $held descriptors, its third session refused: $msg"

# everyone else goes on: sessions of their own, runs, exports through a descriptor
other=$(as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	"$other_target" 99 300000 0 | awk '{ print $3 }' | tr -d '"')
[[ -n $other ]] || fail "uid $OTHER could not start a session"
root=$(start_session "$root_target" 99 300000)
[[ -n $root ]] || fail "root could not start a session"
[[ $(wait_finished "$other") == completed ]] || fail "uid $OTHER's session failed: $(prop "$other" Error)"
[[ $(wait_finished "$root") == completed ]] || fail "root's session failed: $(prop "$root" Error)"
as_other "$EXPORT_TO_FD" "$BUS" "$other" metrics "$T/other/metrics.json" ||
	fail "uid $OTHER's ExportToFd failed while uid 65534 holds its descriptors"
grep -q samples_captured "$T/other/metrics.json" || fail "uid $OTHER's export is not the metrics"
"$EXPORT_TO_FD" "$BUS" "$root" metrics "$T/root.json" || fail "root's ExportToFd failed"
other_served
! grep -q "Too many open files" "$T/profd.log" || fail "profd ran out of descriptors: $(grep -m1 'Too many' "$T/profd.log")"
ok "uid $OTHER and root start sessions, store runs and export through a descriptor meanwhile"

for p in "$a" "$b"; do
	bctl call $DEST "$p" $SES Stop
	wait_finished "$p" >/dev/null
	bctl call $DEST "$p" $SES Release
done
for p in "$other" "$root"; do
	bctl call $DEST "$p" $SES Release
done
health_after "fd exhaustion"
