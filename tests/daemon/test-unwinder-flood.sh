#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A hostile unwinder (flood-unwinder, in place of profd-unwinder beside a copy
# of profd) asks profd for a 16 MiB file of its symbol cache as fast as profd
# answers, each one a copy made on profd's loop: it is held to its share of
# the loop. Another client's ListRuns keep answering meanwhile,
# profd's loop thread uses well under all of its time, the session's metrics
# count the time its unwinder was held back, and profd still stops cleanly
# (the flooding unwinder, which never finishes, is killed 10 s into the stop).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"
: "${FLOOD_UNWINDER:?}"

mkdir "$T/bin"
cp "$PROFD" "$T/bin/profd"
cp "$FLOOD_UNWINDER" "$T/bin/profd-unwinder"
PROFD=$T/bin/profd
start_bus
start_profd

# list_runs N: call ListRuns N times, print each call's milliseconds; fail if one is not answered
list_runs() {
	local i t0 t1
	for i in $(seq "$1"); do
		t0=$(date +%s%N)
		bctl --timeout=10 call $DEST $MGR_PATH $MGR ListRuns >/dev/null ||
			fail "ListRuns call $i was not answered"
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000))
	done
}
# summary: median and largest of the numbers on stdin
summary() {
	sort -n | awk '{ v[NR] = $1 } END { printf "median %d ms, max %d ms", v[int((NR + 1) / 2)], v[NR] }'
}
# loop_ticks: CPU clock ticks of profd's main thread (its event loop) so far
loop_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$PROFD_PID/task/$PROFD_PID/stat"
}
flooding() { grep -q 'flood-unwinder: [0-9]* answers' "$T/profd.log"; }

before=$(list_runs 20 | summary)

spawn_workload 1 "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 1
# profd's default ceiling (MaxDurationSec 60): the stop comes well before it
s=$(session_as "${AS_NOBODY[@]}" -- "$SPAWNED" 99 60000000)
[[ -n $s ]] || fail "the session did not start"
wait_until 30 flooding || fail "the hostile unwinder did not get going: $(tail -n 5 "$T/profd.log")"
ticks0=$(loop_ticks)
wall0=$(date +%s%N)
during=$(list_runs 40 | summary)
ticks1=$(loop_ticks)
wall1=$(date +%s%N)
answers=$(grep -o 'flood-unwinder: [0-9]* answers' "$T/profd.log" | tail -n 1 | grep -o '[0-9]*')
share=$(((ticks1 - ticks0) * 1000000000 / $(getconf CLK_TCK) * 100 / (wall1 - wall0)))
((share < 60)) || fail "profd's loop thread was busy $share% of the flood (ListRuns $during)"
throttled=$(bctl --json=short call $DEST "$s" $SES GetMetrics |
	python3 -c 'import json, sys; print(json.loads(json.load(sys.stdin)["data"][0])["consumer_throttled_nanos"])')
((throttled > 0)) || fail "the flooded session's metrics count no time its unwinder was held back"
ok "a flooding unwinder ($answers answers) held back $((throttled / 1000000)) ms; ListRuns $during (before: $before), profd's loop thread $share% busy"

stop_profd TERM
[[ $PROFD_RC == 0 ]] || fail "profd exited $PROFD_RC when stopped beside a flooding unwinder"
grep -q "did not finish within 10 s once profd began to stop; killed" "$T/profd.log" ||
	fail "the flooding unwinder was not ended at the stop: $(grep unwinder "$T/profd.log" | tail -n 3)"
! grep -q 'sessions and requests did not finish within' "$T/profd.log" || fail "profd's stop ran into its own timeout"
ok "profd stopped cleanly beside it: the flooding unwinder was killed, its session failed"
