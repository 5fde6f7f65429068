#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Two users' unwinders under the installed unit (DESIGN.md §8, issue #10):
# alice and bob each profile a process of their own at 999 Hz (two busy
# threads) at the same time, each named by an unwinder of their own: both
# lose nothing, by every count the metrics keep (samples_dropped, and the
# ring's LOST samples, throttling, the backlog's cap, side-band records that
# make it up). Then bob's unwinder is stopped (SIGSTOP): alice's next session
# still loses nothing, bob's goes on with a new unwinder after
# UnwinderTimeoutSec (the stopped one killed) and completes, counting the restart. Last, profd stopped (SIGTERM)
# with bob's unwinder stopped again and the default UnwinderTimeoutSec (30 s):
# profd gives his unwinder 10 s, saves his session failed with that reason
# and exits 0, before its own 20 s stop timeout.
source "$(dirname "$0")/lib.sh"

boot_system
alice=$(add_user alice)
bob=$(add_user bob)
# a hung unwinder is given up on sooner than the default 30 s (the test's own time)
# (the installed profd.conf, under the build's prefix)
conf=$(in_container sh -c 'for f in /etc/profd/profd.conf /usr/local/etc/profd/profd.conf; do
	[ -f "$f" ] && echo "$f"; done' | head -n 1)
[[ -n $conf ]] && in_container sh -c "printf 'UnwinderTimeoutSec=5\n' >>$conf" ||
	fail "cannot configure profd: no profd.conf installed"
alice_pid=$(spawn_as alice $TESTS_BIN/workload-split 600 2)
bob_pid=$(spawn_as bob $TESTS_BIN/workload-split 600 2)

# record USER PID SECONDS NAME: profctl record as USER in the background, its
# metrics into /home/USER/NAME.json, its messages into NAME.log; prints profctl's pid
record() {
	in_container sh -c "setpriv --reuid=$1 --regid=$1 --init-groups -- env HOME=/home/$1 \
		profctl record -p $2 -F 999 -d $3 -f metrics -o /home/$1/$4.json \
		>/home/$1/$4.log 2>&1 </dev/null & echo \$!"
}
# fail_told MESSAGE: fail, after every line of profd's journal on unwinders and sessions
# (fail() shows only the last ones: a restart that went wrong began long before)
fail_told() {
	echo "--- profd's journal, its unwinders and sessions:" >&2
	in_container journalctl --no-pager -q -b -u profd.service | grep -E 'unwinder|session' >&2 || true
	fail "$@"
}
# wait_ended PID: profctl PID ended (within 120 s)
wait_ended() {
	wait_gone "$1" 120 || fail_told "profctl $1 did not end"
}
# lossless USER NAME: the session's metrics say it kept samples and lost none
lossless() {
	local m
	m=$(in_container cat "/home/$1/$2.json") ||
		fail "uid $1's profctl wrote no metrics: $(in_container cat "/home/$1/$2.log")"
	python3 -c 'import json, sys
m = json.loads(sys.argv[1])
lost = {k: m[k] for k in ("samples_dropped", "lost_samples", "lost_records", "throttled_samples",
                          "backlog_dropped", "records_dropped", "side_band_lost") if m.get(k)}
if m["samples_captured"] == 0 or lost or m["end_reason"] != "duration":
    sys.exit("%s: %d samples, end %s, lost %s" % (sys.argv[2], m["samples_captured"], m["end_reason"], lost))
print("%d at %d Hz" % (m["samples_captured"], m["hz"]))' "$m" "$1's $2" || fail "uid $1's session $2 lost samples"
}
# unwinder_of UID: the pid of the unwinder profd last started for UID
unwinder_of() {
	in_container journalctl -q -b -u profd.service |
		sed -n "s/.*started the unwinder of uid $1 (pid \([0-9]*\)).*/\1/p" | tail -n 1
}

# sessions_of UID: how many sessions profd started for UID so far
sessions_of() {
	in_container journalctl -q -b -u profd.service | grep -c ": uid $1 samples pid:"
}

# both users at once
a=$(record alice "$alice_pid" 4 both)
b=$(record bob "$bob_pid" 4 both)
wait_ended "$a"
wait_ended "$b"
na=$(lossless alice both)
nb=$(lossless bob both)
[[ -n $(unwinder_of "$alice") && -n $(unwinder_of "$bob") && $(unwinder_of "$alice") != "$(unwinder_of "$bob")" ]] ||
	fail "alice and bob do not have an unwinder each: '$(unwinder_of "$alice")' '$(unwinder_of "$bob")'"
ok "uid $alice and uid $bob at 999 Hz at once, an unwinder each: $na and $nb samples, none lost"

# bob's unwinder stopped: alice's session loses nothing, bob's goes on with a new unwinder
before=$(sessions_of "$bob")
b=$(record bob "$bob_pid" 30 stopped)
for _ in $(seq 300); do
	(($(sessions_of "$bob") > before)) && break
	sleep 0.1
done
stopped=$(unwinder_of "$bob")
in_container kill -0 "$stopped" 2>/dev/null || fail "bob's unwinder does not run during his session"
in_container kill -STOP "$stopped"
a=$(record alice "$alice_pid" 4 beside)
wait_ended "$a"
na=$(lossless alice beside)
wait_ended "$b"
m=$(in_container cat /home/bob/stopped.json) ||
	fail_told "bob's session with his unwinder stopped wrote no metrics: $(in_container cat /home/bob/stopped.log)"
restarts=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get("unwinder_restarts", 0))' "$m")
((restarts == 1)) || fail_told "bob's session counts $restarts unwinder restarts, not 1"
in_container journalctl -q -b -u profd.service |
	grep -q "unwinder of uid $bob (pid $stopped): did not answer in time; killed; 1 session(s) go on with a new one" ||
	fail_told "profd did not say why it replaced bob's unwinder"
! in_container kill -0 "$stopped" 2>/dev/null || fail "bob's stopped unwinder $stopped was not killed"
b=$(record bob "$bob_pid" 2 after)
wait_ended "$b"
nb=$(lossless bob after)
ok "bob's unwinder stopped: alice's session kept $na samples, none lost; bob's completed with a new unwinder ($restarts restart); his next kept $nb with unwinder $(unwinder_of "$bob")"

# profd stopping while bob's unwinder hangs, with the default UnwinderTimeoutSec
# (30 s, longer than profd's 20 s wait). SIGTERM to profd alone: `systemctl
# stop` would SIGCONT the unit's every process, his unwinder too.
in_container sed -i '/^UnwinderTimeoutSec=5$/d' "$conf"
in_container systemctl restart profd.service || fail "cannot restart profd"
profd=$(wait_active)
before=$(sessions_of "$bob")
b=$(record bob "$bob_pid" 60 at-stop)
for _ in $(seq 300); do
	(($(sessions_of "$bob") > before)) && break
	sleep 0.1
done
(($(sessions_of "$bob") > before)) || fail "bob's session did not start: $(in_container cat /home/bob/at-stop.log)"
hung=$(unwinder_of "$bob")
in_container kill -0 "$hung" 2>/dev/null || fail "bob's unwinder does not run during his session"
in_container kill -STOP "$hung"
in_container kill -TERM "$profd"
wait_gone "$profd" 30 || fail "profd $profd did not exit within 30 s of SIGTERM"
journal=$(in_container journalctl -q -b -u profd.service)
grep -q "profd\[$profd\]: unwinder of uid $bob (pid $hung): did not finish within 10 s once profd began to stop; killed" <<<"$journal" ||
	fail "profd did not give up on bob's hung unwinder at the stop: $(tail -n 5 <<<"$journal")"
grep -q "profd\[$profd\]: session .* failed: .*did not finish within 10 s once profd began to stop" <<<"$journal" ||
	fail "bob's session was not saved failed with the reason: $(tail -n 5 <<<"$journal")"
! grep -q "profd\[$profd\]: sessions and requests did not finish within" <<<"$journal" ||
	fail "profd's stop ran into its own timeout"
! grep -q "Main process exited, code=" <<<"$journal" || fail "profd exited with a failure: $(grep 'Main process exited' <<<"$journal")"
! in_container kill -0 "$hung" 2>/dev/null || fail "bob's hung unwinder $hung survived profd"
ok "SIGTERM with bob's unwinder hung: profd gave it 10 s, saved his session failed with the reason, exited 0"
