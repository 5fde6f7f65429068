#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Faults: kill -9 mid-session and restart (earlier runs and finished sessions
# intact, the interrupted one failed), corrupt files in the state directory
# (set aside, start-up goes on), SIGTERM mid-session (saved, stopped early,
# exit 0).
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}"

start_bus
start_profd

spawn_workload "$WORKLOAD_SPLIT" 120 1
target=$SPAWNED
full_id=$(mgr SubmitRun s "$(cat "$FIXTURES_DIR/valid/full.json")" | cut -d' ' -f2 | tr -d '"')
sparse_id=$(mgr SubmitRun s "$(cat "$FIXTURES_DIR/valid/sparse.json")" | cut -d' ' -f2 | tr -d '"')
done_path=$(start_session "$target" 199 500000)
[[ $(wait_finished "$done_path") == completed ]] || fail "the first session failed"
done_run=$(prop "$done_path" RunId)
bctl call $DEST "$done_path" $SES Export s folded >"$T/folded.before"
mgr GetRun s "$full_id" >"$T/full.before"
mgr GetRun s "$done_run" >"$T/run.before"

# sampling until samples are there (SamplesCaptured is live), however slow a loaded machine is
has_samples() { (($(prop "$1" SamplesCaptured) > 0)); }

# --- the target exits mid-session: a normal end with what was gathered
spawn_workload "$WORKLOAD_SPLIT" 120 1
short=$SPAWNED
exit_path=$(start_session "$short" 199 20000000)
wait_until 30 has_samples "$exit_path" || fail "no samples of the short target"
kill -TERM "$short"
[[ $(wait_finished "$exit_path") == completed ]] || fail "a target's exit failed its session"
bctl call $DEST "$exit_path" $SES GetMetrics | grep -q 'end_reason.*target-exited' ||
	fail "the metrics do not say the target exited"
mgr GetRun s "$(prop "$exit_path" RunId)" | grep -q '\\"status\\":\\"completed\\"' ||
	fail "the run of a session whose target exited is not completed"
ok "target exit ends the session normally"

# --- kill -9 while sampling
busy_path=$(start_session "$target" 99 20000000)
wait_until 30 has_samples "$busy_path" || fail "the session to interrupt has no samples"
stop_profd KILL
start_profd
[[ $(mgr GetRun s "$full_id") == "$(cat "$T/full.before")" ]] || fail "a submitted run changed"
mgr GetRun s "$sparse_id" >/dev/null || fail "a submitted run is lost"
[[ $(mgr GetRun s "$done_run") == "$(cat "$T/run.before")" ]] || fail "a session's run changed"
[[ $(prop "$done_path" State) == completed ]] || fail "the finished session did not come back"
[[ $(bctl call $DEST "$done_path" $SES Export s folded) == "$(cat "$T/folded.before")" ]] ||
	fail "the finished session's export changed across kill -9"
bctl call $DEST "$done_path" $SES Export s pprof >/dev/null || fail "pprof export lost"
[[ $(prop "$busy_path" State) == failed ]] || fail "the interrupted session is not failed"
[[ $(prop "$busy_path" Error) == *interrupted* ]] || fail "the interrupted session does not say why"
expect_error org.profd.Profiler1.Error.NotReady \
	bctl call $DEST "$busy_path" $SES Export s folded >/dev/null
ok "kill -9: runs and finished sessions intact, the interrupted session failed"

# --- corrupt files are set aside, never fatal
stop_profd
echo "garbage" >"$T/state/runs/00000000000000ff.run"
printf 'profd-run-v1 owner=0 finished_usec=1\n{"schema":"keyhog-profile-v1"}\n' \
	>"$T/state/runs/00000000000000fe.run"
mkdir -p "$T/state/sessions/0123456789abcdef"
echo "id=0123456789abcdef" >"$T/state/sessions/0123456789abcdef/session"
echo "state=exploded" >>"$T/state/sessions/0123456789abcdef/session"
start_profd
[[ -f $T/state/runs/00000000000000ff.run.corrupt && -f $T/state/runs/00000000000000fe.run.corrupt ]] ||
	fail "corrupt run files were not set aside: $(ls "$T/state/runs")"
[[ -d $T/state/sessions/0123456789abcdef.corrupt ]] || fail "the corrupt session was not set aside"
grep -q "00000000000000fe.run.*identity" "$T/profd.log" ||
	fail "no log line names the corrupt run file and why"
mgr GetRun s "$full_id" >/dev/null || fail "good runs were lost with the corrupt ones"
[[ $(prop "$done_path" State) == completed ]] || fail "good sessions were lost with the corrupt one"
ok "corrupt files set aside with a log line, start-up goes on"

# --- SIGTERM while sampling: stopped early, saved, exit 0
term_path=$(start_session "$target" 199 20000000)
wait_until 30 has_samples "$term_path" || fail "the session to stop has no samples"
stop_profd TERM
[[ $PROFD_RC == 0 ]] || fail "profd exited $PROFD_RC on SIGTERM"
start_profd
[[ $(prop "$term_path" State) == completed ]] || fail "the session stopped by SIGTERM was not saved"
(( $(prop "$term_path" DurationUSec) < 20000000 )) || fail "the saved window is not the shortened one"
(( $(prop "$term_path" SamplesCaptured) > 0 )) || fail "the saved session has no samples"
bctl call $DEST "$term_path" $SES GetMetrics | grep -q 'end_reason.*stopped' ||
	fail "the metrics do not say the session was stopped"
mgr GetRun s "$(prop "$term_path" RunId)" >/dev/null || fail "its run record is missing"
ok "SIGTERM: session stopped early and saved, exit 0"
