#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Abuse: exports into terminals nobody reads. ExportToFd into a pty blocks
# while its output is stopped (Ctrl-S) or its buffer full; uid 65534 passes
# six stopped terminals.
# Each such copy runs on a thread of its own, so uid 2's Export and
# ExportToFd go through while all six wait; when the terminals are read at
# last every byte arrives; and SIGTERM with six stalled terminals ends profd
# at once (exit 0) instead of waiting on them.
source "$(dirname "$0")/lib.sh"
: "${EXPORT_TO_FD:?}" "${EXPORT_FD3:?}"

start_bus
start_profd
threads() {
	awk '/^Threads:/ { print $2 }' "/proc/$PROFD_PID/status"
}
threads_at_least() { # N: for wait_until
	(($(threads) >= $1))
}
spawn_workload 2 "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 2
nobody_target=$SPAWNED
spawn_workload "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 300 1
other_target=$SPAWNED
stalled=$(finished_session "${AS_NOBODY[@]}" "$nobody_target" 999 1000000)
other=$(finished_session "${AS_OTHER[@]}" "$other_target" 999 1000000)
"$EXPORT_FD3" "$BUS" "$stalled" firefox 3>"$T/reference.json" ||
	fail "ExportToFd into a file failed"
size=$(stat -c %s "$T/reference.json")
mkdir -m 700 "$T/other" && chown $OTHER "$T/other"
health_before

stall() { # DIR: six stopped terminals exporting uid 65534's session, each copied on a thread of its own
	local base
	base=$(threads)
	stall_terminals "$1" 6 "$BUS" "$stalled" firefox $NOBODY
	wait_until 120 threads_at_least $((base + 6)) ||
		fail "profd does not copy into six terminals on six threads: $(threads) threads, $base before"
}

stall "$T/round1"
as_other busctl --address="$BUS" call $DEST "$other" $SES Export s folded >/dev/null ||
	fail "uid $OTHER's Export failed beside six stalled terminals"
as_other "$EXPORT_TO_FD" "$BUS" "$other" svg "$T/other/flame.svg" 2>/dev/null ||
	fail "uid $OTHER's ExportToFd failed beside six stalled terminals"
[[ $(cat "$T/round1/pending") == 6 ]] || fail "the terminal exports did not stall (a terminal was read?)"
ok "uid $OTHER's Export and ExportToFd answered while six terminal exports wait"

drain_terminals "$T/round1"
while read -r rc got; do
	[[ $rc == 0 ]] || fail "a terminal export failed once read ($rc)"
	((got >= size)) || fail "a terminal got $got bytes of $size"
done <"$T/round1/drained"
ok "read at last, each terminal got the whole export"
health_after "pty readers"

stall "$T/round2"
stop_profd TERM &
stopper=$!
# stalled exports held profd forever; the bound stays below its 20-s grace for sessions
wait_until 15 eval '! kill -0 "$stopper" 2>/dev/null' ||
	fail "profd did not exit within 15 s of SIGTERM with six stalled terminals"
wait "$stopper" || fail "stopping profd failed"
[[ $(cat "$T/round2/pending") == 6 || ! -e $T/round2/drained ]] || fail "the terminals were read before profd exited"
ok "SIGTERM with six stalled terminals: profd exits at once"
touch "$T/round2/drain"
