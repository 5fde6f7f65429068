#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Limits: concurrent sessions globally and per uid (TooManySessions), the cap
# on kept finished sessions, and nothing held after a client that started a
# session has gone (busctl disconnects right after StartSession).
source "$(dirname "$0")/lib.sh"

cat >"$T/profd.conf" <<'EOC'
[Profiler]
MaxSessions=3
MaxSessionsPerUser=2
MaxFinishedSessions=3
EOC
start_bus
# a low soft limit, as a login shell may hand down: profd lifts it to the hard one
ulimit -Sn 256
start_profd

fd_count() {
	ls "/proc/$PROFD_PID/fd" | wc -l
}
# profd closes a session's fds as it finishes: wait for that rather than assume it. At most as
# many as before: the first count may include what profd's start-up worker (the kernel symbol
# table) still held then.
fds_idle_again() {
	(($(fd_count) <= fds_idle))
}

read -r soft hard < <(awk '/^Max open files/ { print $4, $5 }' "/proc/$PROFD_PID/limits")
[[ $soft == "$hard" ]] || fail "profd's open file limit is $soft, not raised to the hard $hard"
ok "open file limit raised to the hard limit $hard"

spawn_workload "$WORKLOAD_SPLIT" 120 1
root_target=$SPAWNED
spawn_workload "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 120 1
own_target=$SPAWNED
fds_idle=$(fd_count)

nobody_start() { # PID DURATION_USEC: print the session path
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
		"$1" 99 "$2" 0 | awk '{ print $3 }' | tr -d '"'
}
a=$(nobody_start "$own_target" 20000000)
b=$(nobody_start "$own_target" 20000000)
[[ -n $a && -n $b ]] || fail "uid 65534 could not start two sessions"
(( $(fd_count) > fds_idle )) || fail "running sessions hold no perf fds?"
msg=$(expect_error org.profd.Profiler1.Error.TooManySessions \
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	"$own_target" 99 1000000 0)
[[ $msg == *MaxSessionsPerUser* ]] || fail "the per-uid refusal does not name the limit: $msg"
# users other than root hold 2 of 3: root's share is kept for root
spawn_workload "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 120 1
other_target=$SPAWNED
msg=$(expect_error org.profd.Profiler1.Error.TooManySessions \
	as_other busctl --address="$BUS" call $DEST \
	$MGR_PATH $MGR StartSession 'uuta{sv}' "$other_target" 99 1000000 0)
[[ $msg == *"other than root"* ]] || fail "the users' share refusal does not say so: $msg"
c=$(start_session "$root_target" 99 20000000)
[[ -n $c ]] || fail "root could not start a session beside users at their share"
msg=$(expect_error org.profd.Profiler1.Error.TooManySessions \
	mgr StartSession 'uuta{sv}' "$root_target" 99 1000000 0)
[[ $msg == *MaxSessions* ]] || fail "the global refusal does not name the limit: $msg"
ok "TooManySessions per uid, for users together (root keeps its share) and globally: $msg"

# every busctl above has disconnected; Stop from another connection ends them
for p in "$a" "$b" "$c"; do
	bctl call $DEST "$p" $SES Stop
done
for p in "$a" "$b" "$c"; do
	[[ $(wait_finished "$p") == completed ]] || fail "stopped session $p failed"
done
# before the 20 s window, and by the Stop, however long a loaded machine took to get here
(( $(prop "$a" DurationUSec) < 20000000 )) && bctl call $DEST "$a" $SES GetMetrics | grep -q 'end_reason.*stopped' ||
	fail "Stop did not end the window early"
wait_until 30 fds_idle_again ||
	fail "profd holds $(fd_count) fds after the sessions ended, $fds_idle before"
ok "stopped sessions of gone clients release their perf fds"

# a client that vanishes mid-session: the session still ends at its deadline
d=$(start_session "$root_target" 99 700000)
(( $(fd_count) > fds_idle )) || fail "the session holds no fds"
[[ $(wait_finished "$d") == completed ]] || fail "the orphaned session failed"
wait_until 30 fds_idle_again || fail "fds leaked by the orphaned session"
e=$(start_session "$root_target" 99 300000)
f=$(start_session "$root_target" 99 300000)
wait_finished "$e" >/dev/null
wait_finished "$f" >/dev/null
ok "an orphaned session ends on time and frees its slot and fds"

# with stop_on_disconnect, a client that vanishes takes its session's window with it
"$HOLD_SESSION" "$BUS" "$root_target" 20000000 >"$T/held" &
holder=$!
CHILDREN+=("$holder")
wait_until 30 test -s "$T/held" || fail "hold-session did not start a session"
held=$(cat "$T/held")
[[ -n $held && $(prop "$held" State) == sampling ]] || fail "hold-session did not start a session"
kill -9 "$holder"
{ wait "$holder"; } 2>/dev/null || true
# the window is 20 s: finished before it, and "stopped", means the client's exit ended it
[[ $(wait_finished "$held" 30) == completed ]] || fail "the abandoned session failed"
(( $(prop "$held" DurationUSec) < 20000000 )) || fail "the client's exit did not end the window"
bctl call $DEST "$held" $SES GetMetrics | grep -q 'end_reason.*stopped' ||
	fail "the abandoned session was not stopped"
wait_until 30 fds_idle_again || fail "fds leaked by the abandoned session"
ok "stop_on_disconnect: a client killed mid-session stops it and leaks nothing"

# MaxFinishedSessions=3: the oldest finished sessions were released
n=$(mgr ListSessions | awk '{ print $2 }')
[[ $n == 3 ]] || fail "$n finished sessions kept, the cap is 3: $(mgr ListSessions)"
[[ $(ls "$T/state/sessions" | wc -l) == 3 ]] || fail "released sessions left files: $(ls "$T/state/sessions")"
mgr ListSessions | grep -q "$f" || fail "the newest session was released"
[[ $(mgr ListRuns | awk '{ print $2 }') == 7 ]] || fail "released sessions lost their runs"
ok "finished sessions capped at 3, runs kept"

# readers that stall do not hold anyone else up: six ExportToFd into one-page pipes
# left unread until released (25 s at most, below profd's 30 s stall limit), while
# another export and a whole session go through
stalled=()
for i in 1 2 3 4 5 6; do
	"$EXPORT_TO_FD" "$BUS" "$f" svg "$T/stalled-$i.svg" 25 2>/dev/null &
	stalled+=($!)
done
# profd holds the six pipes: every call reached it
six_pipes_held() { (($(fd_count) >= fds_idle + 6)); }
wait_until 30 six_pipes_held || fail "profd holds $(fd_count) fds, not the six stalled readers' pipes"
start=$(date +%s%N)
bctl call $DEST "$f" $SES Export s folded >/dev/null || fail "Export failed beside stalled readers"
"$EXPORT_TO_FD" "$BUS" "$f" svg "$T/prompt.svg" || fail "a prompt ExportToFd failed"
g=$(start_session "$root_target" 99 300000)
[[ $(wait_finished "$g") == completed ]] || fail "a session failed beside stalled readers"
took=$((($(date +%s%N) - start) / 1000000))
# all of that happened while the six still had read nothing
for i in "${!stalled[@]}"; do
	kill -0 "${stalled[$i]}" 2>/dev/null && [[ ! -s $T/stalled-$((i + 1)).svg ]] ||
		fail "stalled reader $i stopped stalling before the others were served"
done
kill -USR1 "${stalled[@]}"
for i in "${!stalled[@]}"; do
	wait "${stalled[$i]}" || fail "stalled reader $i got an error"
	cmp -s "$T/prompt.svg" "$T/stalled-$((i + 1)).svg" || fail "stalled reader $i got other bytes"
done
ok "six stalled readers: others served meanwhile (in $took ms), the stalled ones still got every byte"
