#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What survives profd's end under systemd: a session running at `systemctl
# stop` is ended, saved and back after the next activation; a crash (SIGSEGV)
# is restarted by Restart=on-failure with every acknowledged run (a finished
# session's record, a SubmitRun that replied) and the finished sessions'
# exports back.
source "$(dirname "$0")/lib.sh"

boot_system
alice=$(add_user alice)
alice_pid=$(spawn_as alice $TESTS_BIN/workload-split 300 1)
root_pid=$(spawn_as root $TESTS_BIN/workload-split 300 1)

# --- systemctl stop during a session ---------------------------------------
reply=$(as_user alice busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' "$alice_pid" 199 \
	60000000 0) || fail "uid $alice cannot start a session: $reply"
read -r _ id path <<<"$reply"
id=${id//\"/} path=${path//\"/}
wait_session "$path" sampling
for _ in $(seq 600); do # some samples first (60 s: a hang guard for a loaded machine)
	(($(session_prop "$path" SamplesCaptured) > 20)) && break
	sleep 0.1
done
pid=$(main_pid)
in_container systemctl stop profd.service
[[ $(in_container systemctl show -P Result profd.service) == success &&
	$(in_container systemctl show -P ExecMainStatus profd.service) == 0 ]] ||
	fail "systemctl stop with a session running: Result=$(in_container systemctl show -P Result profd.service) status $(in_container systemctl show -P ExecMainStatus profd.service)"
in_container journalctl -q -u profd.service _PID="$pid" -g 'stopping: ending 1 running' >/dev/null ||
	fail "profd did not log ending the running session"

# the next call activates profd again; the session is there, completed, for its owner
out=$(as_user alice profctl sessions) || fail "profctl sessions as uid $alice: $out"
[[ $out == *"$id"*completed* ]] || fail "uid $alice's session $id is not back completed: $out"
state=$(as_user alice busctl get-property $DEST "$path" $SES State)
samples=$(as_user alice busctl get-property $DEST "$path" $SES SamplesCaptured)
duration=$(as_user alice busctl get-property $DEST "$path" $SES DurationUSec)
run=$(as_user alice busctl get-property $DEST "$path" $SES RunId)
run=${run#s } run=${run//\"/}
[[ $state == 's "completed"' && ${samples#t } -gt 20 && ${duration#t } -lt 60000000 ]] ||
	fail "session after the stop: $state, $samples, $duration"
as_user alice profctl export "$id" -f folded -o /home/alice/stopped.folded >/dev/null ||
	fail "uid $alice cannot export the session saved at stop"
in_container grep -q split_heavy /home/alice/stopped.folded || fail "the saved session's export is unnamed"
as_user alice profctl runs | grep -q "$run" || fail "uid $alice's run $run is not listed"
ok "systemctl stop during uid $alice's session: exit 0, session $id back completed (${samples#t } samples, ${duration#t } us of 60 s), exportable, run $run listed"

# --- a crash ----------------------------------------------------------------
reply=$(mgr StartSession 'uuta{sv}' "$root_pid" 199 1000000 0) || fail "root cannot start a session: $reply"
read -r _ session_id session_path <<<"$reply"
session_id=${session_id//\"/} session_path=${session_path//\"/}
wait_session "$session_path" completed
in_container profctl export "$session_id" -f folded -o /root/before.folded >/dev/null ||
	fail "root cannot export session $session_id"
# a record of her own under a new run id
record=$(in_container profctl run show --json "$run") || fail "root cannot read uid $alice's run $run"
python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
r["identity"]["run_id"] = "submitted-before-the-crash"
print(json.dumps(r))' <<<"$record" | in_container sh -c 'cat >/tmp/record.json && chmod 644 /tmp/record.json'

submitted=$(as_user alice profctl run submit /tmp/record.json) || fail "uid $alice cannot submit a record"
[[ $submitted == submitted-before-the-crash ]] || fail "run submit printed '$submitted'"
before=$(run_ids)
# crash right after the submit's reply
pid=$(main_pid)
in_container kill -SEGV "$pid"
pid2=$(wait_active)
[[ $pid2 != "$pid" ]] || fail "profd (pid $pid) was not restarted"
[[ $(in_container systemctl show -P NRestarts profd.service) == 1 ]] ||
	fail "NRestarts=$(in_container systemctl show -P NRestarts profd.service) after one crash"
in_container journalctl -q -u profd.service -g 'Main process exited, code=(dumped|killed), status=11/SEGV' \
	>/dev/null || fail "the journal does not show the SIGSEGV"
after=$(run_ids)
missing=$(comm -23 <(echo "$before") <(echo "$after"))
[[ -z $missing && $before == *"$submitted"* ]] ||
	fail "runs lost in the crash: ${missing:-the submitted $submitted}"
as_user alice profctl runs | grep -q "$submitted" || fail "uid $alice's submitted run is not hers after the crash"
in_container profctl export "$session_id" -f folded -o /root/after.folded >/dev/null ||
	fail "the finished session $session_id cannot be exported after the crash"
in_container cmp -s /root/before.folded /root/after.folded ||
	fail "session $session_id's export differs after the crash"
ok "SIGSEGV: restarted (pid $pid -> $pid2, NRestarts=1), all $(wc -l <<<"$after") runs back (submitted $submitted), session $session_id's export unchanged"
