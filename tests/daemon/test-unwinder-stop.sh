#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profd stopping (SIGTERM) while one user's unwinder hangs (SIGSTOP), with the
# default UnwinderTimeoutSec (30 s), longer than profd's 20 s wait for its
# sessions: unwinders get 10 s to finish once profd stops, so the hung one's
# session is saved "failed" with the reason, not cut off "interrupted"; the
# other user's session completes with nothing lost; profd exits 0 by itself,
# before its own stop timeout; the hung unwinder is killed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

cat >"$T/profd.conf" <<EOC
[Profiler]
UnwinderTimeoutSec=30
EOC
start_bus
start_profd

# profd's default ceiling (MaxDurationSec 60): the stop comes well before it
two_users_sessions 60000000
wait_until 30 sampled "$a" || fail "uid $NOBODY's session took no sample"
wait_until 30 sampled "$b" || fail "uid $OTHER's session took no sample"
wait_until 30 has_unwinder $NOBODY || fail "no unwinder for uid $NOBODY"
hung=$(unwinder_pid $NOBODY)
kill -STOP "$hung"
stop_profd TERM
[[ $PROFD_RC == 0 ]] || fail "profd exited $PROFD_RC when stopped beside a hung unwinder"
! grep -q 'sessions and requests did not finish within' "$T/profd.log" ||
	fail "profd waited for the hung unwinder until its own stop timeout: $(grep 'sessions and requests did not finish' "$T/profd.log")"
grep -q "unwinder of uid $NOBODY (pid $hung): did not finish within 10 s once profd began to stop; killed" "$T/profd.log" ||
	fail "the hung unwinder was not given up on: $(grep unwinder "$T/profd.log")"
! kill -0 "$hung" 2>/dev/null || fail "the hung unwinder $hung still runs"
ok "stopped beside a hung unwinder, profd gave up on it within its wait and exited 0"

# what the sessions' files say, read back by the next profd
start_profd
[[ $(prop "$a" State) == failed ]] || fail "uid $NOBODY's session is '$(prop "$a" State)', not failed"
err=$(prop "$a" Error)
[[ $err == *"the unwinder of uid $NOBODY did not finish within 10 s once profd began to stop"* && $err != *interrupted* ]] ||
	fail "uid $NOBODY's session ended with an unclear error: $err"
[[ $(prop "$b" State) == completed ]] || fail "uid $OTHER's session is '$(prop "$b" State)': $(prop "$b" Error)"
(($(prop "$b" SamplesCaptured) > 0)) || fail "uid $OTHER's session kept no sample"
out=$(lost_nothing "$b" 2>&1) || fail "uid $OTHER's session lost samples or records beside a hung unwinder: $out"
ok "the hung unwinder's session failed ($err); uid $OTHER's completed with $(prop "$b" SamplesCaptured) samples, none dropped"
