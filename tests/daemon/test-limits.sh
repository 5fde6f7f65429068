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

read -r soft hard < <(awk '/^Max open files/ { print $4, $5 }' "/proc/$PROFD_PID/limits")
[[ $soft == "$hard" ]] || fail "profd's open file limit is $soft, not raised to the hard $hard"
ok "open file limit raised to the hard limit $hard"

spawn "$WORKLOAD_SPLIT" 30 1
root_target=$SPAWNED
spawn "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 30 1
own_target=$SPAWNED
sleep 0.2
fds_idle=$(fd_count)

a=$(start_session "$root_target" 99 20000000)
b=$(start_session "$root_target" 99 20000000)
(( $(fd_count) > fds_idle )) || fail "running sessions hold no perf fds?"
msg=$(expect_error org.profd.Profiler1.Error.TooManySessions \
	mgr StartSession 'uuta{sv}' "$root_target" 99 1000000 0)
[[ $msg == *MaxSessionsPerUser* ]] || fail "the per-uid refusal does not name the limit: $msg"
c=$(as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	"$own_target" 99 20000000 0 | awk '{ print $3 }' | tr -d '"')
[[ -n $c ]] || fail "uid 65534 could not start a session below the global limit"
msg=$(expect_error org.profd.Profiler1.Error.TooManySessions \
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	"$own_target" 99 1000000 0)
[[ $msg == *MaxSessions* ]] || fail "the global refusal does not name the limit: $msg"
ok "TooManySessions per uid and globally: $msg"

# every busctl above has disconnected; Stop from another connection ends them
for p in "$a" "$b" "$c"; do
	bctl call $DEST "$p" $SES Stop
done
for p in "$a" "$b" "$c"; do
	[[ $(wait_finished "$p") == completed ]] || fail "stopped session $p failed"
done
(( $(prop "$a" DurationUSec) < 10000000 )) || fail "Stop did not end the window early"
sleep 0.2
[[ $(fd_count) == "$fds_idle" ]] ||
	fail "profd holds $(fd_count) fds after the sessions ended, $fds_idle before"
ok "stopped sessions of gone clients release their perf fds"

# a client that vanishes mid-session: the session still ends at its deadline
d=$(start_session "$root_target" 99 700000)
(( $(fd_count) > fds_idle )) || fail "the session holds no fds"
[[ $(wait_finished "$d") == completed ]] || fail "the orphaned session failed"
sleep 0.2
[[ $(fd_count) == "$fds_idle" ]] || fail "fds leaked by the orphaned session"
e=$(start_session "$root_target" 99 300000)
f=$(start_session "$root_target" 99 300000)
wait_finished "$e" >/dev/null
wait_finished "$f" >/dev/null
ok "an orphaned session ends on time and frees its slot and fds"

# with stop_on_disconnect, a client that vanishes takes its session's window with it
"$HOLD_SESSION" "$BUS" "$root_target" 20000000 >"$T/held" &
holder=$!
CHILDREN+=("$holder")
for _ in $(seq 100); do
	[[ -s $T/held ]] && break
	sleep 0.05
done
held=$(cat "$T/held")
[[ -n $held && $(prop "$held" State) == sampling ]] || fail "hold-session did not start a session"
kill -9 "$holder"
{ wait "$holder"; } 2>/dev/null || true
[[ $(wait_finished "$held" 3) == completed ]] || fail "the abandoned session failed"
(( $(prop "$held" DurationUSec) < 10000000 )) || fail "the client's exit did not end the window"
bctl call $DEST "$held" $SES GetMetrics | grep -q 'end_reason.*stopped' ||
	fail "the abandoned session was not stopped"
sleep 0.2
[[ $(fd_count) == "$fds_idle" ]] || fail "fds leaked by the abandoned session"
ok "stop_on_disconnect: a client killed mid-session stops it and leaks nothing"

# MaxFinishedSessions=3: the oldest finished sessions were released
n=$(mgr ListSessions | awk '{ print $2 }')
[[ $n == 3 ]] || fail "$n finished sessions kept, the cap is 3: $(mgr ListSessions)"
[[ $(ls "$T/state/sessions" | wc -l) == 3 ]] || fail "released sessions left files: $(ls "$T/state/sessions")"
mgr ListSessions | grep -q "$f" || fail "the newest session was released"
[[ $(mgr ListRuns | awk '{ print $2 }') == 7 ]] || fail "released sessions lost their runs"
ok "finished sessions capped at 3, runs kept"

# readers that stall do not hold anyone else up: six ExportToFd into one-page pipes
# left unread for 4 s, while another export and a whole session go through
stalled=()
for i in 1 2 3 4 5 6; do
	"$EXPORT_TO_FD" "$BUS" "$f" svg "$T/stalled-$i.svg" 4 2>/dev/null &
	stalled+=($!)
done
sleep 0.3
start=$(date +%s%N)
bctl call $DEST "$f" $SES Export s folded >/dev/null || fail "Export failed beside stalled readers"
g=$(start_session "$root_target" 99 300000)
[[ $(wait_finished "$g" 3) == completed ]] || fail "a session failed beside stalled readers"
took=$((($(date +%s%N) - start) / 1000000))
(( took < 3500 )) || fail "an export and a session took $took ms beside stalled readers"
"$EXPORT_TO_FD" "$BUS" "$f" svg "$T/prompt.svg" 2>/dev/null || fail "a prompt ExportToFd failed"
for i in "${!stalled[@]}"; do
	wait "${stalled[$i]}" || fail "stalled reader $i got an error"
	cmp -s "$T/prompt.svg" "$T/stalled-$((i + 1)).svg" || fail "stalled reader $i got other bytes"
done
ok "six stalled readers: others served in $took ms, the stalled ones still got every byte"
