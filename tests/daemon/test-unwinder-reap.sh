#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Killed unwinders whose exit does not come (DESIGN.md §8): a tracer takes a
# dead tracee's exit before its parent may reap it, as a process stuck in the
# kernel never gives one. profd kills an unwinder gone idle and one that hangs
# (stopped), each with its exit held so: it must go on answering every caller
# at once (never wait for such an exit on its loop), give the uids new
# unwinders meanwhile, and after 30 s give up on the stuck ones: the hung
# one's session fails naming the uid and the pid, the uid's next session
# completes.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

[[ $(id -u) == 0 ]] || { echo "SKIP: tracing profd's unwinders is root's"; exit 77; }

cat >"$T/profd.conf" <<EOC
[Profiler]
UnwinderTimeoutSec=3
UnwinderIdleSec=2
EOC
# hold-exit.py PID FILE: trace PID without stopping it and never wait for it: its exit stays
# the tracer's, its parent cannot reap it (its pidfd says it exited all the same)
cat >"$T/hold-exit.py" <<'EOP'
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE = 0x4206
if libc.ptrace(ctypes.c_long(PTRACE_SEIZE), ctypes.c_int(int(sys.argv[1])), None, None) != 0:
    sys.exit("cannot trace %s: %s" % (sys.argv[1], os.strerror(ctypes.get_errno())))
open(sys.argv[2], "w").write("traced\n")
while True:
    signal.pause()
EOP
# hold_exit PID: trace it with hold-exit.py until the test ends
hold_exit() {
	spawn python3 "$T/hold-exit.py" "$1" "$T/traced-$1"
	wait_until 30 test -s "$T/traced-$1" || fail "cannot trace unwinder $1"
}
# dead PID: the process has exited (a zombie nobody reaped) or is gone
dead() {
	[[ ! -e /proc/$1/stat ]] || [[ $(awk '{ print $3 }' "/proc/$1/stat") == Z ]]
}
start_bus
start_profd
spawn_workload 2 "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 2
nobody_target=$SPAWNED
spawn_workload 2 "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 300 2
other_target=$SPAWNED

# uid NOBODY's unwinder, its exit held from mid-session on (it could go idle before a tracer
# started on a loaded machine), goes idle once the session is done
a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 6000000)
[[ -n $a ]] || fail "uid $NOBODY's session did not start"
wait_until 60 sampled "$a" || fail "uid $NOBODY's session took no sample"
idle=$(unwinder_pid $NOBODY)
hold_exit "$idle"
[[ $(wait_finished "$a" 60) == completed ]] || fail "uid $NOBODY's session failed: $(prop "$a" Error)"
# uid OTHER's unwinder hangs mid-session (stopped) with its exit held
b=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 60000000)
[[ -n $b ]] || fail "uid $OTHER's session did not start"
wait_until 60 sampled "$b" || fail "uid $OTHER's session took no sample"
hung=$(unwinder_pid $OTHER)
hold_exit "$hung"
kill -STOP "$hung"

# both killed (the idle one after UnwinderIdleSec, the hung one after UnwinderTimeoutSec)
wait_until 60 dead "$idle" || fail "profd did not end its idle unwinder $idle"
wait_until 60 dead "$hung" || fail "profd did not kill its hung unwinder $hung"
# ... neither reapable: profd answers both users all the same, and each uid's next session
# gets a new unwinder and completes
other_served
as_nobody busctl --address="$BUS" get-property $DEST $MGR_PATH $MGR Version >/dev/null ||
	fail "uid $NOBODY got no answer while its killed unwinder's exit was held"
a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 300000)
[[ $(wait_finished "$a" 60) == completed ]] ||
	fail "uid $NOBODY's session beside its held unwinder failed: $(prop "$a" Error)"
newer_unwinder $NOBODY "$idle" || fail "uid $NOBODY's session was not given a new unwinder"
c=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 300000)
[[ $(wait_finished "$c" 60) == completed ]] ||
	fail "uid $OTHER's session beside its held unwinder failed: $(prop "$c" Error)"
state=$(prop "$b" State)
[[ $state != completed && $state != failed ]] ||
	fail "the session of the hung unwinder is '$state' before profd gave up on it"
ok "killed unwinders whose exits are held: profd answers both users, each uid's next session completes"

# 30 s after the kill profd gives up on both: the hung one's session fails, saying why
[[ $(wait_finished "$b" 120) == failed ]] || fail "the hung unwinder's session did not fail"
error=$(prop "$b" Error)
[[ $error == *"uid $OTHER (pid $hung) did not exit within 30 s of being killed; abandoned"* ]] ||
	fail "the hung unwinder's session failed with '$error'"
wait_until 60 grep -q "unwinder of uid $NOBODY (pid $idle) did not exit within 30 s" \
	"$T/profd.log" || fail "profd did not give up on the idle unwinder $idle"
c=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 300000)
[[ $(wait_finished "$c" 60) == completed ]] ||
	fail "uid $OTHER's session after its unwinder was abandoned failed: $(prop "$c" Error)"
ok "abandoned 30 s after the kill: the session failed naming uid $OTHER and pid $hung, the next completed"
