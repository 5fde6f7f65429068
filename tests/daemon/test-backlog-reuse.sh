#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A uid's next session writes its records on the backlog its last one left
# (#14: the pages are there already, no first-touch faults), and only that
# uid's: another user's session gets a backlog of its own that no other
# unwinder maps, two sessions of one uid at once never share one, and a kept
# backlog goes with its unwinder. Each session reused must still be whole:
# completed, its samples named.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

start_bus
start_profd

# backlog_inodes PID: the inodes of the profd-backlog memfds PID maps, one a line
backlog_inodes() {
	awk '/memfd:profd-backlog/ { print $5 }' "/proc/$1/maps" | sort -u
}

# maps_inode PID INODE: PID maps the backlog INODE
maps_inode() {
	backlog_inodes "$1" | grep -qx "$2"
}

# backlog_gone INODE: profd maps the backlog INODE no more (for wait_until)
backlog_gone() {
	! maps_inode "$PROFD_PID" "$1"
}

# every session at 999 Hz copying 2048 B of stack: each wants a backlog of one size
SAME_SIZE=(stack_bytes u 2048)

# whole SESSION: completed, with samples, the workload's functions named in its export
whole() {
	[[ $(wait_finished "$1" 60) == completed ]] || fail "session $1 failed: $(prop "$1" Error)"
	(($(prop "$1" SamplesCaptured) > 0)) || fail "session $1 took no sample"
	"$EXPORT_TO_FD" "$BUS" "$1" folded "$T/folded" 2>/dev/null || fail "cannot export $1"
	grep -q split_ "$T/folded" || fail "session $1 names none of the workload's functions"
}

spawn_workload 2 "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 2
nobody_target=$SPAWNED
spawn_workload 2 "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 300 2
other_target=$SPAWNED

a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 1000000 "${SAME_SIZE[@]}")
whole "$a"
kept=$(backlog_inodes "$PROFD_PID")
[[ $kept =~ ^[0-9]+$ ]] || fail "profd keeps '$kept' after uid $NOBODY's session, not one backlog"
a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 1000000 "${SAME_SIZE[@]}")
whole "$a"
[[ $(backlog_inodes "$PROFD_PID") == "$kept" ]] ||
	fail "uid $NOBODY's next session did not use its backlog again: $(backlog_inodes "$PROFD_PID" | xargs) after, $kept before"
ok "uid $NOBODY's next session writes on its last backlog (inode $kept), and comes out whole"

b=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 1000000 "${SAME_SIZE[@]}")
whole "$b"
others=$(backlog_inodes "$PROFD_PID" | grep -vx "$kept" || true)
[[ $others =~ ^[0-9]+$ ]] || fail "uid $OTHER's session left '$others' beside uid $NOBODY's backlog, not one of its own"
! maps_inode "$(unwinder_pid $OTHER)" "$kept" || fail "uid $OTHER's unwinder maps uid $NOBODY's backlog"
! maps_inode "$(unwinder_pid $NOBODY)" "$others" || fail "uid $NOBODY's unwinder maps uid $OTHER's backlog"
maps_inode "$PROFD_PID" "$kept" || fail "uid $OTHER's session took uid $NOBODY's backlog"
ok "uid $OTHER's session gets a backlog of its own (inode $others); neither unwinder maps the other's"

# two sessions of one uid at once (long enough to be seen both sampling on a loaded
# machine): one may have the kept backlog, never both
spawn_workload 2 "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 2
second_target=$SPAWNED
a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 8000000 "${SAME_SIZE[@]}")
a2=$(session_as "${AS_NOBODY[@]}" -- "$second_target" 999 8000000 "${SAME_SIZE[@]}")
wait_until 30 sampled "$a" && wait_until 30 sampled "$a2" || fail "the two sessions took no sample"
state_is "$a" sampling && state_is "$a2" sampling || fail "the two sessions were not sampling at once"
n=$(backlog_inodes "$PROFD_PID" | wc -l)
((n == 3)) || fail "two sessions of uid $NOBODY and uid $OTHER's kept backlog map $n backlogs, not 3"
whole "$a"
whole "$a2"
ok "two sessions of one uid at once: a backlog each, both whole"

# the unwinder goes: its uid's kept backlog goes with it; the next session starts afresh
unwinder=$(unwinder_pid $NOBODY)
kept=$(backlog_inodes "$PROFD_PID" | grep -vx "$others" || true)
[[ $kept =~ ^[0-9]+$ ]] || fail "profd keeps '$kept' for uid $NOBODY, not one backlog"
kill -KILL "$unwinder"
wait_until 30 backlog_gone "$kept" || fail "uid $NOBODY's backlog outlived its unwinder"
a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 1000000 "${SAME_SIZE[@]}")
whole "$a"
backlog_gone "$kept" || fail "a backlog came back after its unwinder died"
ok "a kept backlog goes with its unwinder; the next session of the uid gets a new one"
