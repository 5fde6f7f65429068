#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The sandboxed unwinders under a real profd (DESIGN.md §8): one per caller
# uid, running with no capability, NO_NEW_PRIVS and a seccomp filter; two
# users at 999 Hz both lose nothing; one user's unwinder stopped (SIGSTOP) or
# crashed is replaced mid-session: that user's session goes on with a new
# one and completes, counting the restart, the other user's completes with
# nothing lost, profd goes on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

cat >"$T/profd.conf" <<EOC
[Profiler]
UnwinderTimeoutSec=4
UnwinderIdleSec=60
EOC
start_bus
start_profd
profd_pid=$PROFD_PID

two_users_sessions 3000000
wait_until 30 has_unwinder $OTHER || fail "no unwinder started for uid $OTHER"
for uid in $NOBODY $OTHER; do
	p=$(unwinder_pid $uid)
	[[ -n $p ]] || fail "no unwinder started for uid $uid"
	grep -q '^CapEff:[[:space:]]*0000000000000000$' /proc/$p/status || fail "unwinder $p has capabilities"
	grep -q '^CapPrm:[[:space:]]*0000000000000000$' /proc/$p/status || fail "unwinder $p may regain capabilities"
	grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/$p/status || fail "unwinder $p lacks NoNewPrivs"
	grep -q '^Seccomp:[[:space:]]*2$' /proc/$p/status || fail "unwinder $p has no seccomp filter"
	[[ $(cat /proc/$p/comm) == profd-unwinder ]] || fail "pid $p is not an unwinder"
done
[[ $(unwinder_pid $NOBODY) != "$(unwinder_pid $OTHER)" ]] || fail "two users share an unwinder"
ok "one unwinder per uid: CapEff 0, CapPrm 0, NoNewPrivs 1, Seccomp 2"

for s in "$a" "$b"; do
	[[ $(wait_finished "$s" 30) == completed ]] || fail "session $s failed: $(prop "$s" Error)"
	(( $(prop "$s" SamplesCaptured) > 0 )) || fail "session $s took no sample"
	out=$(lost_nothing "$s" 2>&1) || fail "session $s lost samples or records: $out"
done
"$EXPORT_TO_FD" "$BUS" "$a" folded "$T/a.folded" 2>/dev/null || fail "cannot export"
grep -q split_ "$T/a.folded" || fail "the unwinder did not name the workload's functions"
ok "two users at 999 Hz: both complete, nothing dropped, named frames"

# uid OTHER's unwinder stops answering: after the timeout it is killed and its session goes
# on with a new one
stopped=$(unwinder_pid $OTHER)
kill -STOP "$stopped"
a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 3000000)
b=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 3000000)
[[ $(wait_finished "$a" 30) == completed ]] || fail "uid $NOBODY's session failed beside a stopped unwinder: $(prop "$a" Error)"
out=$(lost_nothing "$a" 2>&1) || fail "uid $NOBODY's session lost samples or records beside a stopped unwinder: $out"
[[ $(wait_finished "$b" 30) == completed ]] || fail "the stopped unwinder's session failed: $(prop "$b" Error)"
[[ $(metric "$b" unwinder_restarts) == 1 ]] || fail "unwinder_restarts '$(metric "$b" unwinder_restarts)', not 1"
grep -q "unwinder of uid $OTHER (pid $stopped): did not answer in time; killed; 1 session(s) go on with a new one" \
	"$T/profd.log" || fail "profd did not say why it replaced the unwinder: $(grep unwinder "$T/profd.log" | tail -n 3)"
wait_until 10 test ! -e /proc/$stopped || fail "the stopped unwinder was not ended"
[[ $(unwinder_pid $OTHER) != "$stopped" ]] || fail "no new unwinder for uid $OTHER"
ok "a stopped unwinder is replaced after the timeout: its session completes ($(metric "$b" samples_lost_unwinder) samples lost with it); the other user's loses nothing"

b=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 1000000)
[[ $(wait_finished "$b" 30) == completed ]] || fail "uid $OTHER's next session failed: $(prop "$b" Error)"
ok "the next session of that uid completes"

# uid NOBODY's unwinder crashes mid-session: the session goes on with a new one, which names
# the workload from what profd tells it of the mappings the dead one had read
a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 6000000)
b=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 2000000)
crashed=$(unwinder_pid $NOBODY)
wait_until 30 sampled "$a" || fail "the session took no sample"
# SIGABRT, as a failed assertion in libdw would (AddressSanitizer would take a SIGSEGV for its own)
kill -ABRT "$crashed"
[[ $(wait_finished "$a" 30) == completed ]] || fail "the crashed unwinder's session failed: $(prop "$a" Error)"
[[ $(metric "$a" unwinder_restarts) == 1 ]] || fail "unwinder_restarts '$(metric "$a" unwinder_restarts)', not 1"
grep -q "unwinder of uid $NOBODY (pid $crashed): killed by signal 6 (Aborted); 1 session(s) go on" "$T/profd.log" ||
	fail "profd did not say why it replaced the unwinder"
"$EXPORT_TO_FD" "$BUS" "$a" folded "$T/a.folded" 2>/dev/null || fail "cannot export"
grep -q split_ "$T/a.folded" || fail "the new unwinder did not name the workload's functions"
[[ $(wait_finished "$b" 30) == completed ]] || fail "uid $OTHER's session failed beside a crash: $(prop "$b" Error)"
kill -0 "$profd_pid" 2>/dev/null || fail "profd died"
ok "a crashed unwinder is replaced mid-session: its session completes, named ($(metric "$a" samples_lost_unwinder) samples lost with it); profd goes on"
