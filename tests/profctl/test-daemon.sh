#!/usr/bin/env bash
# profctl end to end against profd on a private bus: runs, run show/submit/delete,
# sessions, status, stop, export; errors from the daemon reach the user.
source "$(dirname "$0")/../daemon/lib.sh"
: "${PROFCTL:?PROFCTL must name the profctl binary}"

start_bus
start_profd

pc() { "$PROFCTL" --address="$BUS" "$@"; }

# run submit / runs / run show / run delete with a fixture
run_id=$(pc run submit "$FIXTURES_DIR/valid/full.json") || fail "run submit of full.json failed"
[[ $run_id == 4242-1764460800000000000-0 ]] || fail "run submit printed '$run_id'"
ok "run submit prints the run id"

pc runs >"$T/runs.txt" || fail "runs failed"
grep -qE "^RUN +STATUS +SOURCE +WORKLOAD +WALL +FINISHED" "$T/runs.txt" || fail "runs has no header: $(cat "$T/runs.txt")"
grep -qE "^$run_id +completed +filesystem +repo-medium +1\.990s" "$T/runs.txt" || fail "runs lacks the run: $(cat "$T/runs.txt")"
pc --json runs | python3 -c '
import json, sys
runs = json.load(sys.stdin)
assert any(r["run_id"] == sys.argv[1] and r["wall_time_ns"] == 1990123456 for r in runs), runs' "$run_id" ||
	fail "runs --json lacks the run"
ok "runs lists it, as a table and as JSON"

pc run show "$run_id" >"$T/show.txt" || fail "run show failed"
cmp -s "$T/show.txt" "$FIXTURES_DIR/valid/full.txt" || fail "run show text differs from render_text: $(diff "$T/show.txt" "$FIXTURES_DIR/valid/full.txt")"
pc run show --json "$run_id" | python3 -c '
import json, sys
a = json.load(sys.stdin); b = json.load(open(sys.argv[1]))
assert a == b, "records differ"' "$FIXTURES_DIR/valid/full.json" || fail "run show --json differs from the submitted record"
ok "run show prints the record's render_text, and the record with --json"

pc run submit "$FIXTURES_DIR/invalid/invalid-unknown-stage.json" 2>"$T/err" && fail "an invalid record was accepted"
grep -q "stages\[0\].stage" "$T/err" || fail "the refusal does not name the field: $(cat "$T/err")"
ok "run submit of an invalid record fails naming the field"

pc run delete "$run_id" || fail "run delete failed"
pc run show "$run_id" 2>"$T/err" && fail "a deleted run is still shown"
grep -q "cannot get run '$run_id'" "$T/err" || fail "unclear error for a deleted run: $(cat "$T/err")"
ok "run delete removes it; showing it then fails clearly"

# sessions, status, stop, export
spawn_workload "$WORKLOAD_SPLIT" 120 1
target=$SPAWNED
bctl call $DEST $MGR_PATH $MGR StartSession uuta{sv} "$target" 499 20000000 0 >"$T/start" ||
	fail "StartSession failed"
id=$(awk '{ gsub(/"/, "", $2); print $2 }' "$T/start")
pc sessions | grep -qE "^ID +PID +STATE +TARGET +PATH$" || fail "sessions has no header: $(pc sessions)"
pc sessions | grep -qE "^$id +$target +sampling +pid:$target +/" || fail "sessions does not list '$id' sampling pid:$target: $(pc sessions)"
pc --json sessions | python3 -c 'import json,sys; s=json.load(sys.stdin); assert any(x["target"] == "pid:" + sys.argv[1] for x in s), s' "$target" ||
	fail "sessions --json lacks the target"
pc status "$id" | grep -qE "^ +State: sampling$" || fail "status: $(pc status "$id")"
pc --json status "$id" | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["Pid"] == int(sys.argv[1])' "$target" ||
	fail "status --json lacks Pid"
ok "sessions (with its target) and status show the running session"

# a u64 above INT64_MAX (a saturated request: 2^64-1 us) comes out as the exact number
bctl call $DEST $MGR_PATH $MGR StartSession uuta{sv} "$target" 99 18446744073709551615 0 \
	>"$T/start-max" || fail "StartSession of 2^64-1 us failed"
max_id=$(awk '{ gsub(/"/, "", $2); print $2 }' "$T/start-max")
pc --json status "$max_id" | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["RequestedDurationUSec"] == 2**64 - 1, s' ||
	fail "status --json: RequestedDurationUSec is not 2^64-1: $(pc --json status "$max_id")"
pc status "$max_id" | grep -qE "^ +RequestedDurationUSec: 18446744073709551615$" ||
	fail "status: $(pc status "$max_id")"
pc stop "$max_id" || fail "stop of the 2^64-1 us session failed"
ok "a u64 above INT64_MAX is exact in status and status --json"

has_samples() { (($(prop "$path" SamplesCaptured) > 0)); }
path=$(awk '{ gsub(/"/, "", $3); print $3 }' "$T/start")
wait_until 30 has_samples || fail "the session has no samples"
pc stop "$id" || fail "stop failed"
completed() {
	[[ $(pc --json status "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["State"])') == completed ]]
}
wait_until 60 completed || fail "the stopped session did not complete"
pc export "$id" -f folded -o "$T/out.folded" || fail "export folded failed"
grep -qE ";split_heavy(;workload_mix)? [0-9]+$" "$T/out.folded" || fail "folded export lacks split_heavy: $(head -5 "$T/out.folded")"
pc export "$id" -f pprof >"$T/out.pb.gz" || fail "export pprof to stdout failed"
gzip -t "$T/out.pb.gz" || fail "pprof export is not gzip"
ok "stop, then export to a file and to stdout"

pc export "$id" -f nonsense -o "$T/bad" 2>"$T/err" && fail "an unknown format was accepted"
[[ -e $T/bad ]] && fail "a failed export left its output file"
grep -q "cannot export session '$id'" "$T/err" || fail "unclear error: $(cat "$T/err")"
pc status nosuchsession 2>"$T/err" && fail "status of a missing session succeeded"
grep -q "no such session" "$T/err" || fail "unclear error: $(cat "$T/err")"
ok "unknown format and unknown session fail clearly"

# record through the daemon: -p and -- CMD (held before exec, so exec happens mid-session)
spawn_workload "$WORKLOAD_SPLIT" 120 1
pc record -p $SPAWNED -F 499 -d 2 -o "$T/p.folded" 2>"$T/err" || fail "record -p failed: $(cat "$T/err")"
grep -qE "main;split_worker;split_heavy(;workload_mix)? [0-9]+$" "$T/p.folded" ||
	fail "record -p folded lacks main..split_heavy: $(head -3 "$T/p.folded")"
ok "record -p writes a folded profile named from main"

# record releases its session as it ends (DESIGN.md: Release): its run stays, listed the same
# way as a table and as JSON; exporting the gone session, or the run's id, says why it fails
rec_run=$(pc --json runs | python3 -c 'import json, sys
print(max((r["run_id"] for r in json.load(sys.stdin)), key=lambda i: int(i.split("-")[1])))')
pc runs | grep -qE "^$rec_run +completed " || fail "runs lacks record's run $rec_run: $(pc runs)"
# the session's id as one would see it in 'profctl sessions' while it ran: here, profd's log
rec_session=$(sed -n "s/^<6>session \([0-9a-f]*\): uid [0-9]* samples pid:$SPAWNED .*/\1/p" "$T/profd.log")
[[ -n $rec_session ]] || fail "profd's log names no session of pid $SPAWNED"
pc export "$rec_session" -f metrics 2>"$T/err" && fail "a released session was exported"
grep -q "cannot export session '$rec_session': no such session (.*released.*'profctl runs')" "$T/err" ||
	fail "the error does not say record released the session: $(cat "$T/err")"
pc export "$rec_run" -f metrics 2>"$T/err" && fail "a run id was exported as a session"
grep -q "a run id is not a session id" "$T/err" || fail "the error does not tell a run id: $(cat "$T/err")"
ok "record's session is released at its end: its run is listed, export of either id says why not"

pc record -F 499 -o "$T/cmd.svg" -- "$WORKLOAD_SPLIT" 1.5 2 2>"$T/err" || fail "record -- CMD failed: $(cat "$T/err")"
grep -q "exited with status 0" "$T/err" || fail "record -- CMD did not report the exit status: $(cat "$T/err")"
grep -q "split_heavy" "$T/cmd.svg" || fail "the flame graph of the command lacks split_heavy"
kill -0 "$PROFD_PID" || fail "profd died profiling a command that execs mid-session"
ok "record -- CMD profiles the command across its exec and reports its exit status"

pc runs | grep -qE " completed +pid +workload-split " || fail "the command's run is not named after it: $(pc runs)"
ok "the command's run record is named after the command"

pc record -F 499 -f metrics -- sh -c 'exit 3' >"$T/m.json" 2>"$T/err"
grep -q "exited with status 3" "$T/err" || fail "a failing command's status is not reported: $(cat "$T/err")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))["samples_captured"]' "$T/m.json" ||
	fail "metrics of a short command are not JSON"
ok "a command's non-zero exit status is reported"

pc record -p 999999 -d 1 2>"$T/err" && fail "record of a missing pid succeeded"
grep -q "cannot profile pid 999999" "$T/err" || fail "unclear error for a missing pid: $(cat "$T/err")"
pc record -d 1 -- /nonexistent/command 2>"$T/err" && fail "record of a missing command succeeded"
grep -q "cannot run '/nonexistent/command'" "$T/err" || fail "unclear error for a missing command: $(cat "$T/err")"
ok "a missing pid and a missing command fail clearly"

# --local and the daemon agree on the hottest function of the same workload
spawn_workload "$WORKLOAD_SPLIT" 120 1
w=$SPAWNED
hottest() { awk '{ n = split($1, f, ";"); c[f[n]] += $2 } END { for (k in c) print c[k], k }' "$1" | sort -rn | head -1 | cut -d' ' -f2; }
pc record -p $w -F 499 -d 1.5 -o "$T/d.folded" || fail "daemon record failed"
"$PROFCTL" --local record -p $w -F 499 -d 1.5 -o "$T/l.folded" || fail "local record failed"
[[ $(hottest "$T/d.folded") == "$(hottest "$T/l.folded")" ]] ||
	fail "hottest leaf differs: daemon $(hottest "$T/d.folded"), local $(hottest "$T/l.folded")"
ok "--local and the daemon agree on the hottest function ($(hottest "$T/l.folded"))"

# Ctrl-C stops the session through the daemon and still writes the output
spawn_workload "$WORKLOAD_SPLIT" 120 1
w=$SPAWNED
# 100 s asked of a profd whose MaxDurationSec is 60: profctl says the window is 60 s
"$PROFCTL" --address="$BUS" record -p $w -F 499 -d 100 -o "$T/int.folded" 2>"$T/err" &
rec=$!
# profctl handles Ctrl-C once its session runs; then let the session take samples
wait_until 30 catches_signal $rec 2 "$PROFCTL" || fail "profctl record never got ready for Ctrl-C"
session_has_samples() {
	int_session=$(mgr ListSessions | grep -o '"/org/profd/Profiler1/session/[^"]*" [0-9]* "sampling"' | cut -d'"' -f2)
	[[ -n $int_session ]] && (($(prop "$int_session" SamplesCaptured) > 0))
}
wait_until 30 session_has_samples || fail "the recorded session has no samples"
kill -INT $rec
wait $rec || fail "record interrupted by Ctrl-C failed: $(cat "$T/err")"
# the session goes with profctl's Release; its run record (the newest) stays and times its sampling
int_run=$(pc --json runs | python3 -c 'import json, sys
print(max((r["run_id"] for r in json.load(sys.stdin)), key=lambda i: int(i.split("-")[1])))')
# the daemon's own account, however long a loaded machine took to get here: sampling (the run's
# 'scanning' state) ended before its 60 s window, so the Ctrl-C ended it
bctl --json=short call $DEST $MGR_PATH $MGR GetRun s "$int_run" | python3 -c '
import json, sys
run = json.loads(json.load(sys.stdin)["data"][0])
at = {t["state"]: t["elapsed_ns"] for t in run["transitions"]}
sampled = at["resolving"] - at["scanning"]
assert sampled < 60 * 10**9, "sampled %.1f s: the whole window" % (sampled / 1e9)' ||
	fail "Ctrl-C did not stop the 60 s session early (run $int_run)"
grep -q "split_heavy" "$T/int.folded" || fail "the interrupted session wrote no profile"
grep -qx "profctl record: sampling for 60.0 s, not the 100.0 s asked: profd's MaxDurationSec" "$T/err" ||
	fail "profctl did not say profd cut the window: $(cat "$T/err")"
[[ $(tr -d -c '\r' <"$T/err" | wc -c) -eq 0 ]] || fail "progress was drawn although stderr is not a terminal"
ok "Ctrl-C stops a daemon session early and still writes the output; no progress off a terminal"
ok "a window longer than profd's ceiling is cut, and profctl says so"

# a rate above the ceiling (profd's MaxHz 10000, and the engine's without profd) is cut, and said
pc record -p $w -F 20000 -d 0.2 -o "$T/hz.folded" 2>"$T/err" || fail "record at 20000 Hz failed: $(cat "$T/err")"
grep -qx "profctl record: sampling at 10000 Hz, not the 20000 Hz asked: profd's MaxHz" "$T/err" ||
	fail "profctl did not say profd cut the rate: $(cat "$T/err")"
"$PROFCTL" --local record -p $w -F 20000 -d 0.2 -o "$T/hz.folded" 2>"$T/err" ||
	fail "local record at 20000 Hz failed: $(cat "$T/err")"
grep -q "^profctl record: sampling at [0-9]* Hz, not the 20000 Hz asked: the kernel's" "$T/err" ||
	fail "profctl --local did not say the rate was cut: $(cat "$T/err")"
pc record -p $w -F 499 -d 0.2 -o "$T/hz.folded" 2>"$T/err" || fail "record at 499 Hz failed: $(cat "$T/err")"
! grep -q "not the" "$T/err" || fail "profctl reported a cut of a request within the ceilings: $(cat "$T/err")"
ok "a rate above the ceiling is cut, and profctl says so (and says nothing of a request within it)"

# on a terminal, live progress: elapsed of total, samples, dropped
script -qec "$PROFCTL --address=$BUS record -p $w -F 99 -d 1.5 -o $T/tty.folded" /dev/null >"$T/tty.out" ||
	fail "record on a pseudo-terminal failed: $(cat "$T/tty.out")"
grep -qE "[0-9.]+ s of 1\.5 s, [0-9]+ samples, [0-9]+ dropped" "$T/tty.out" ||
	fail "no live progress on a terminal: $(tr '\r' '\n' <"$T/tty.out" | tail -3)"
ok "live progress on a terminal"
