#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Stopping never drops a caller: while clients call profd as fast as it
# answers (call-until-gone), SIGTERM, SIGINT or SIGHUP arrive; every call gets an
# answer, never "no reply": a return, or the bus's ServiceUnknown once the name
# is gone (profd releases it before it stops serving, so no call to the name
# gets the NoServer meant for calls that reach it later). Idle and with a
# session being saved, several times (the race is in the last moments). And
# when the bus goes away, running sessions are still saved and profd exits 1.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}" "${CALL_UNTIL_GONE:?}"

CLIENTS=6

start_bus
start_profd
RUN=stop-race
mgr SubmitRun s "$(record_with_id $RUN)" >/dev/null || fail "cannot store a run to read back"

has_samples() { (($(prop "$1" SamplesCaptured) > 0)); }
clients_ready() {
	local i
	for i in $(seq $CLIENTS); do
		grep -q '^ready$' "$T/client.$1.$i" 2>/dev/null || return 1
	done
}

# race ROUND SIGNAL [SESSION_PATH]: signal profd while CLIENTS clients call it; all answered
race() {
	local round=$1 sig=$2 i pids=() calls=0 refused=0
	for i in $(seq $CLIENTS); do
		spawn "$CALL_UNTIL_GONE" "$BUS" "$RUN" >"$T/client.$round.$i"
		pids+=("$SPAWNED")
	done
	wait_until 60 clients_ready "$round" || fail "round $round: the clients got no first answer"
	stop_profd "$sig"
	[[ $PROFD_RC == 0 ]] || fail "round $round: profd exited $PROFD_RC on SIG$sig"
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" ||
			fail "round $round (SIG$sig): a call was not answered: $(tail -n 1 "$T/client.$round.$((i + 1))")"
		calls=$((calls + $(awk '$1 == "answered" { print $2 }' "$T/client.$round.$((i + 1))")))
		refused=$((refused + $(awk '$1 == "answered" { print $4 }' "$T/client.$round.$((i + 1))")))
	done
	# the name was released before profd stopped serving: calls to it were never refused
	((refused == 0)) || fail "round $round (SIG$sig): $refused calls to the bus name got NoServer"
	ok "round $round: SIG$sig${3:+ while a session is saved} with $CLIENTS clients calling: $calls calls, all answered"
	start_profd
}

for round in 1 2 3 4; do
	race $round TERM
done
race 5 INT
race 6 HUP

spawn_workload "$WORKLOAD_SPLIT" 120 1
target=$SPAWNED
path=$(start_session "$target" 199 60000000)
wait_until 30 has_samples "$path" || fail "the session to stop has no samples"
race 7 TERM "$path"
[[ $(prop "$path" State) == completed ]] || fail "the session stopped under calls was not saved: $(prop "$path" State)"
bctl call $DEST "$path" $SES GetMetrics | grep -q 'end_reason.*stopped' ||
	fail "the metrics of the session stopped under calls do not say it was stopped"

# the bus goes away while a session samples: it is saved as on SIGTERM, profd exits 1
path=$(start_session "$target" 199 60000000)
wait_until 30 has_samples "$path" || fail "the session sampling when the bus goes has no samples"
kill "$BUS_PID"
wait "$BUS_PID" 2>/dev/null || true
{ wait "$PROFD_PID"; } 2>/dev/null && PROFD_RC=0 || PROFD_RC=$?
PROFD_PID=
[[ $PROFD_RC == 1 ]] || fail "profd exited $PROFD_RC when the bus went away, not 1"
grep -q "lost the bus" "$T/profd.log" || fail "no log line says the bus went away"
rm -f "$T/bus.address"
start_bus
start_profd
[[ $(prop "$path" State) == completed ]] ||
	fail "the session sampling when the bus went away was not saved: $(prop "$path" State) $(prop "$path" Error)"
bctl call $DEST "$path" $SES GetMetrics | grep -q 'end_reason.*stopped' ||
	fail "the metrics of the session saved without a bus do not say it was stopped"
ok "the bus went away: the running session saved (completed, stopped), profd exited 1"
