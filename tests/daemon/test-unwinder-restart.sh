#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Restarts of a session's unwinder one after another (DESIGN.md §8), on a profd
# that does nothing else, so that each new unwinder's descriptors take the
# numbers its dead predecessors' just freed: a hung unwinder (SIGSTOP) is
# killed after UnwinderTimeoutSec and replaced, twice, then the third one
# crashes (SIGKILL). profd must hear each new unwinder (its socket) and its
# death (its pidfd) whatever numbers they got: the crash is named as a crash
# at once, not found later as a hang, and the session completes counting 3
# restarts (the hang of CI's system-helper-users: an old unwinder's exit watch,
# removed by number after its pidfd was closed, took the new one's socket).
# Then rounds of one stopped unwinder each, stopped at a different moment of
# its session (at once, mid-way, near its end: killed after it) beside another
# user's session: each completes with its restart counted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"
: "${EXPORT_FD3:?}"

cat >"$T/profd.conf" <<EOC
[Profiler]
UnwinderTimeoutSec=3
UnwinderIdleSec=60
EOC
start_bus
start_profd
# the system C library's debug files are inflated at start (system-prewarm.h): done before the
# descriptors are counted
prewarmed() {
	(($(grep -c 'made an inflated copy' "$T/profd.log") >= $(grep -c 'making an inflated copy' "$T/profd.log")))
}
wait_until 60 prewarmed || fail "profd's start-up copies did not end"

# replaced UID PID WHY: profd said PID of UID went for WHY with its session going on, and
# started another; sets 'next' to it
replaced() {
	wait_until 30 newer_unwinder "$1" "$2" || fail "no unwinder replaced $2: $(grep unwinder "$T/profd.log")"
	next=$(unwinder_pid "$1")
	wait_until 30 grep -q "unwinder of uid $1 (pid $2): $3; 1 session(s) go on with a new one" "$T/profd.log" ||
		fail "profd did not say unwinder $2 went for '$3': $(grep unwinder "$T/profd.log" | tail -n 4)"
}

# free_below PID: how many descriptor numbers below that of unwinder PID's pidfd in profd are
# free (the next ones profd opens take them, lowest first)
free_below() {
	local pidfd n=0
	pidfd=$(grep -l "^Pid:[[:space:]]*$1$" /proc/$PROFD_PID/fdinfo/* | sed 's|.*/||')
	[[ -n $pidfd ]] || fail "profd holds no pidfd of unwinder $1"
	for ((i = 0; i < pidfd; i++)); do
		[[ -e /proc/$PROFD_PID/fd/$i ]] || n=$((n + 1))
	done
	echo $n
}

spawn_workload 2 "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 2
nobody_target=$SPAWNED
spawn_workload 2 "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 300 2
other_target=$SPAWNED
exported=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 500000)
[[ $(wait_finished "$exported" 30) == completed ]] || fail "uid $NOBODY's session failed: $(prop "$exported" Error)"
b=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 30000000)
[[ -n $b ]] || fail "the session did not start"
wait_until 30 sampled "$b" || fail "the session took no sample"
u=$(unwinder_pid $OTHER)
# at most 3 numbers free below the unwinder's pidfd (uid NOBODY's exports into stopped
# terminals hold some meanwhile): its replacement's socketpair and pidfd then take the dead
# ones' numbers, at the first restart or the next
for i in $(seq 20); do
	(($(free_below "$u") > 3)) || break
	stall_terminals "$T/pty$i" 1 "$BUS" "$exported" folded $NOBODY
done
(($(free_below "$u") <= 3)) || fail "$(free_below "$u") descriptors stay free below the unwinder's pidfd"
for n in 1 2; do
	kill -STOP "$u"
	replaced $OTHER "$u" "did not answer in time; killed"
	u=$next
	wait_until 30 kill -0 "$u" || fail "unwinder $u is gone"
done
kill -KILL "$u"
replaced $OTHER "$u" "killed by signal 9 (Killed)"
[[ $(wait_finished "$b" 60) == completed ]] || fail "the session of three restarts failed: $(prop "$b" Error)"
[[ $(metric "$b" unwinder_restarts) == 3 ]] || fail "unwinder_restarts '$(metric "$b" unwinder_restarts)', not 3"
ok "two hung unwinders replaced, the third's crash heard as one: the session completed, 3 restarts"

# replaced_or_done UID PID SESSION: PID was replaced, or SESSION finished meanwhile (for wait_until)
replaced_or_done() {
	newer_unwinder "$1" "$2" || [[ $(prop "$3" State) == completed || $(prop "$3" State) == failed ]]
}

# stop_at DELAY DURATION_USEC: uid OTHER's session of DURATION_USEC with its unwinder stopped
# DELAY seconds in, beside uid NOBODY's session; both complete, OTHER's with one restart. A
# round whose unwinder had finished the session before it was stopped (a loaded machine is
# slow to stop it) shows nothing: it is run again, 5 times at most.
stop_at() {
	local a b u
	for _ in $(seq 5); do
		a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 4000000)
		b=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 "$2")
		[[ -n $a && -n $b ]] || fail "the sessions did not start"
		sleep "$1"
		u=$(unwinder_pid $OTHER)
		kill -STOP "$u"
		wait_until 30 replaced_or_done $OTHER "$u" "$b" || fail "unwinder $u neither replaced nor done"
		newer_unwinder $OTHER "$u" && break
		kill -CONT "$u"
		wait_finished "$a" 60 >/dev/null
		b=
	done
	[[ -n $b ]] || fail "each session ended before its unwinder was stopped $1 s in"
	replaced $OTHER "$u" "did not answer in time; killed"
	[[ $(wait_finished "$b" 60) == completed ]] ||
		fail "the session with its unwinder stopped $1 s in failed: $(prop "$b" Error)"
	[[ $(metric "$b" unwinder_restarts) == 1 ]] ||
		fail "unwinder_restarts '$(metric "$b" unwinder_restarts)' with the unwinder stopped $1 s in, not 1"
	[[ $(wait_finished "$a" 60) == completed ]] || fail "uid $NOBODY's session failed beside: $(prop "$a" Error)"
}
# killed mid-session, or after the session's end (the backlog closed, its rest not taken)
stop_at 0 6000000
stop_at 0.3 2000000
stop_at 1 3000000
stop_at 3 8000000
ok "an unwinder stopped at once, mid-session or near the session's end: each session completed, 1 restart"
