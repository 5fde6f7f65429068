#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Live runs (#15) through a real profd on a private bus: workload-scanner, a
# program linked with libprofd-live, opens its own run (PROFD_LIVE) as an
# unprivileged user; its stored record joins its stage spans with the samples
# (per-stage hot functions and shares against the CPU time it measured), the
# samples of one stage can be exported, and the ways a run goes wrong each
# give a clear result without losing anything else.
source "$(dirname "$0")/../daemon/lib.sh"
: "${WORKLOAD_SCANNER:?}" "${PROFCTL:?}"
CHECK_RECORD=$(dirname "$0")/check-live-record.py

start_bus
start_profd

# get_run ID FILE [AS...]: the stored record (busctl --json=short) into FILE
get_run() {
	local id=$1 file=$2
	shift 2
	"$@" busctl --address="$BUS" --json=short call $DEST $MGR_PATH $MGR GetRun s "$id" >"$file" ||
		fail "GetRun $id"
}

# record_field FILE EXPR: a Python expression over the record 'r'
record_field() {
	python3 -c 'import json,sys; r=json.loads(json.load(open(sys.argv[1]))["data"][0]); print(eval(sys.argv[2]))' "$1" "$2"
}

# scanner OUT [ARGS...]: run the scanner as nobody as a live run, its output in OUT
scanner() {
	local out=$1
	shift
	PROFD_LIVE=$BUS PROFD_LIVE_HZ=${HZ:-499} as_nobody "$WORKLOAD_SCANNER" "$@" >"$out" 2>"$out.err"
}

# spawn_scanner OUT [ARGS...]: the same in the background, waiting until its run is live
spawn_scanner() {
	local out=$1
	shift
	local as=("${AS_NOBODY[@]}")
	[[ -n ${AS:-} ]] && read -ra as <<<"$AS"
	PROFD_LIVE=$BUS PROFD_LIVE_HZ=${HZ:-499} PROFD_LIVE_DURATION_USEC=${DURATION_USEC:-} spawn "${as[@]}" "$WORKLOAD_SCANNER" "$@" >"$out" 2>"$out.err"
	wait_until 60 grep -q '^live ' "$out" || fail "the scanner's run did not become live: $(cat "$out" "$out.err")"
}

run_id_of() {
	awk '$1 == "live" { print $2 }' "$1"
}

# --- the join: each stage's samples are its hot function's, shares as the CPU time
scanner "$T/run1" --chunks 200 || fail "the scanner failed: $(cat "$T/run1" "$T/run1.err")"
grep -q '^finish stored$' "$T/run1" || fail "the run was not stored: $(cat "$T/run1" "$T/run1.err")"
ID1=$(run_id_of "$T/run1")
as_nobody busctl --address="$BUS" --json=short call $DEST $MGR_PATH $MGR GetRun s "$ID1" >"$T/rec1" ||
	fail "GetRun $ID1"
python3 "$CHECK_RECORD" "$T/rec1" "$T/run1" 400 || fail "the joined record of run $ID1"
ok "a live run's record: per-stage hot functions and shares of its samples"

# the record names the session; the samples of one stage come back alone
SESSION1=$(record_field "$T/rec1" 'r["profd"]["session"]')
P1=/org/profd/Profiler1/session/$SESSION1
for stage in source-read:read_hot decode:decode_hot phase2-keyword-ac:scan_hot reporting:report_hot; do
	as_nobody "$PROFCTL" --address="$BUS" export "$SESSION1" -f folded --stage "${stage%%:*}" \
		>"$T/stage.folded" || fail "profctl export --stage ${stage%%:*}"
	want=$(record_field "$T/rec1" "[s for s in r['stages'] if s['stage'] == '${stage%%:*}'][0]['profd']['samples']")
	awk -v fn="${stage#*:}" -v want="$want" -v stage="${stage%%:*}" '
		{ n = $NF; all += n; k = split($1, f, ";"); if (f[k] == fn) own += n }
		END {
			if (all != want) { printf "stage %s: %d samples exported, the record says %d\n", stage, all, want; exit 1 }
			if (own < 0.9 * all) { printf "stage %s: %s is the leaf of %d of %d samples\n", stage, fn, own, all; exit 1 }
		}' "$T/stage.folded" || fail "the folded stacks of stage ${stage%%:*}"
done
# the run's id names the same export as its session's
as_nobody "$PROFCTL" --address="$BUS" export "$ID1" -f folded --stage decode >"$T/by-run.folded" ||
	fail "profctl export --stage by run id $ID1"
as_nobody "$PROFCTL" --address="$BUS" export "$SESSION1" -f folded --stage decode >"$T/by-session.folded"
cmp -s "$T/by-run.folded" "$T/by-session.folded" || fail "export --stage by run id differs from by session id"
if out=$("$PROFCTL" --address="$BUS" export "$SESSION1" -f folded --stage no-such-stage 2>&1); then
	fail "an export of stage 'no-such-stage' succeeded"
fi
grep -q "unknown stage 'no-such-stage'" <<<"$out" || fail "an export of an unknown stage: $out"
ok "profctl export --stage: each stage's folded stacks are its samples, led by its hot function"

# making a stage's export and serving it are one request: one in flight per user is enough
stop_profd TERM
printf '[Profiler]\nMaxRequestsPerUser=1\n' >"$T/profd.conf"
start_profd
as_nobody "$PROFCTL" --address="$BUS" export "$SESSION1" -f folded --stage decode >"$T/one.folded" ||
	fail "profctl export --stage with MaxRequestsPerUser=1"
cmp -s "$T/one.folded" "$T/by-session.folded" || fail "export --stage with MaxRequestsPerUser=1 differs"
stop_profd TERM
: >"$T/profd.conf"
start_profd
ok "profctl export --stage with MaxRequestsPerUser=1: making and serving it are one request"

# --- a second BeginRun from the same process is refused; the first run goes on
scanner "$T/twice" --chunks 4 --begin-twice || fail "the scanner failed: $(cat "$T/twice.err")"
grep -q '^second profd refused the live run: .*in progress' "$T/twice" ||
	fail "a second BeginRun of one process: $(grep '^second' "$T/twice")"
grep -q '^finish stored$' "$T/twice" || fail "the first run of a process that asked twice: $(cat "$T/twice")"
ok "a second BeginRun of the same process: refused, the first run is stored"

# --- another uid can neither finish nor see a run it does not own
spawn_scanner "$T/held" --chunks 4 --wait-file "$T/go-held"
ID2=$(run_id_of "$T/held")
wait_until 60 grep -q '^cpu reporting' "$T/held" || fail "the held scanner did not finish its work"
msg=$(expect_error org.profd.Profiler1.Error.NoSuchRun \
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR FinishRun ss "$ID2" \
	"$(record_with_id "$ID2")")
expect_error org.profd.Profiler1.Error.NoSuchRun \
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR GetRun s "$ID2" >/dev/null
touch "$T/go-held"
wait_until 60 grep -q '^finish' "$T/held" || fail "the held scanner did not finish"
grep -q '^finish stored$' "$T/held" || fail "the owner's FinishRun after another uid's: $(cat "$T/held")"
get_run "$ID2" "$T/rec2" "${AS_NOBODY[@]}"
[[ $(record_field "$T/rec2" 'r["status"], r["profd"]["end_reason"], r["profd"]["spans"]["kept"]') == "('completed', 'finished', 32)" ]] ||
	fail "the run after another uid's FinishRun: $(record_field "$T/rec2" 'r["status"], r["profd"]["end_reason"], r["profd"]["spans"]')"
if out=$(as_other "$PROFCTL" --address="$BUS" export "$SESSION1" -f folded --stage decode 2>&1); then
	fail "uid $OTHER exported another user's stage"
fi
grep -q "no such session" <<<"$out" || fail "uid $OTHER exporting another user's stage: $out"
ok "another uid's FinishRun: NoSuchRun ($msg); its export of the owner's stage: no such session; the owner's run is stored whole"

# --- kill -9 mid-run: the run ends as failed with what was captured, stages from its spans
spawn_scanner "$T/crash" --chunks 100000
ID3=$(run_id_of "$T/crash")
PID3=$SPAWNED
P3=$(mgr ListSessions | grep -o "\"[^\"]*\" $PID3 " | cut -d'"' -f2)
[[ -n $P3 ]] || fail "no session of the scanner $PID3: $(mgr ListSessions)"
sampled() {
	(($(prop "$1" SamplesCaptured) >= $2))
}
wait_until 120 sampled "$P3" 200 || fail "the crashing scanner was not sampled"
kill -9 "$PID3"
[[ $(wait_finished "$P3" 60) == completed ]] || fail "the session of a killed program: $(prop "$P3" Error)"
get_run "$ID3" "$T/rec3" "${AS_NOBODY[@]}"
got=$(record_field "$T/rec3" 'r["status"], r["profd"]["end_reason"], sorted(s["stage"] for s in r["stages"] if s["calls"] > 0)')
[[ $got == "('failed', 'target-exited', ['decode', 'phase2-keyword-ac', 'reporting', 'source-read'])" ]] ||
	fail "the record of a killed program: $got"
record_field "$T/rec3" 'all(s["profd"]["samples"] > 0 for s in r["stages"] if s["stage"] != "reporting")' | grep -q True ||
	fail "the killed program's stages have no samples: $(record_field "$T/rec3" '[(s["stage"], s["profd"]["samples"]) for s in r["stages"]]')"
ok "kill -9 mid-run: stored as failed (target-exited) with the stages of its spans and their samples"

# --- a program scribbling over its own ring spoils only its own run
AS="${AS_OTHER[*]}" spawn_scanner "$T/clean" --chunks 30
spawn_scanner "$T/scribble" --chunks 30 --scribble
wait_until 120 grep -q '^finish' "$T/scribble" || fail "the scribbling scanner did not finish: $(cat "$T/scribble.err")"
wait_until 120 grep -q '^finish' "$T/clean" || fail "the clean scanner did not finish"
grep -q '^finish stored$' "$T/scribble" || fail "the scribbling scanner's run: $(cat "$T/scribble")"
grep -q '^finish stored$' "$T/clean" || fail "the run beside the scribbler: $(cat "$T/clean")"
get_run "$(run_id_of "$T/clean")" "$T/rec4" "${AS_OTHER[@]}"
[[ $(record_field "$T/rec4" 'r["profd"]["spans"]["kept"], r["profd"]["spans"]["ring_errors"]') == "(240, 0)" ]] ||
	fail "the run beside a scribbler: $(record_field "$T/rec4" 'r["profd"]["spans"]')"
get_run "$(run_id_of "$T/scribble")" "$T/rec5" "${AS_NOBODY[@]}"
ok "a scribbled ring: its own run stored ($(record_field "$T/rec5" 'r["profd"]["spans"]')), the other run whole"

# --- profd restarts mid-run: it stores what it captured as a failed run; the program's
# FinishRun after the restart finds that run, and its record is stored with profd's samples
spawn_scanner "$T/restart" --chunks 30 --wait-file "$T/go-restart"
ID6=$(run_id_of "$T/restart")
wait_until 60 grep -q '^cpu reporting' "$T/restart" || fail "the scanner did not finish its work"
stop_profd TERM
start_profd
touch "$T/go-restart"
wait_until 60 grep -q '^finish' "$T/restart" || fail "the scanner did not finish after the restart"
grep -q '^finish stored$' "$T/restart" || fail "FinishRun after a restart: $(cat "$T/restart" "$T/restart.err")"
get_run "$ID6" "$T/rec6" "${AS_NOBODY[@]}"
got=$(record_field "$T/rec6" 'r["status"], r["profd"]["end_reason"], r["profd"].get("finished_late"), r["profd"]["spans"]["kept"], all(s["profd"]["samples"] > 0 for s in r["stages"])')
[[ $got == "('completed', 'stopped', True, 240, True)" ]] || fail "the record of a run across a restart: $got"
ok "profd restarted mid-run: the program's record is stored with what profd sampled before ($got)"

# --- a run past its deadline: stored as failed with what was captured; the program's late
# FinishRun then stores its own record with those samples (finished_late)
DURATION_USEC=1000000 spawn_scanner "$T/late" --chunks 2 --wait-file "$T/go-late"
ID7=$(run_id_of "$T/late")
P7=$(mgr ListSessions | grep -o "\"[^\"]*\" $SPAWNED " | cut -d'"' -f2)
[[ $(wait_finished "$P7" 60) == completed ]] || fail "the session of a run past its deadline: $(prop "$P7" Error)"
get_run "$ID7" "$T/rec7" "${AS_NOBODY[@]}"
[[ $(record_field "$T/rec7" 'r["status"], r["profd"]["end_reason"], r["profd"]["spans"]["kept"]') == "('failed', 'deadline', 16)" ]] ||
	fail "the record of a run past its deadline: $(record_field "$T/rec7" 'r["status"], r["profd"]["end_reason"], r["profd"]["spans"]')"
touch "$T/go-late"
wait_until 60 grep -q '^finish' "$T/late" || fail "the late scanner did not finish"
grep -q '^finish stored$' "$T/late" || fail "FinishRun after the deadline: $(cat "$T/late")"
get_run "$ID7" "$T/rec7b" "${AS_NOBODY[@]}"
got=$(record_field "$T/rec7b" 'r["status"], r["profd"]["end_reason"], r["profd"].get("finished_late"), r["profd"]["spans"]["kept"], r["identity"]["source_kind"]')
[[ $got == "('completed', 'deadline', True, 16, 'files')" ]] || fail "the late FinishRun's record: $got"
ok "a run past its deadline: failed (deadline) with its spans; the late FinishRun's record adopts them ($got)"

# --- BeginRun options out of bounds are refused before anything starts
for bad in "threads u 0:InvalidArgs" "threads u 100000:InvalidArgs" "spans_per_thread u 1000:InvalidArgs" \
	"spans_per_thread u 65536:LimitsExceeded" "run_id s '':InvalidArgs" "no_such s x:InvalidArgs"; do
	name=org.freedesktop.DBus.Error.${bad##*:}
	eval "opts=(${bad%%:*})"
	expect_error "$name" as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR BeginRun 'a{sv}' 1 "${opts[@]}" >/dev/null
done
ok "BeginRun refuses out-of-bounds options (threads, spans_per_thread, ring size, run_id, unknown)"

# --- StartSession's options are a run's too: stop_on_disconnect ends the run with the
# caller's connection (busctl's own process is the run's program here)
out=$(as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR BeginRun 'a{sv}' 2 \
	stop_on_disconnect b true run_id s "sod-$RANDOM" 2>&1) || fail "BeginRun with stop_on_disconnect: $out"
ok "BeginRun takes stop_on_disconnect"

# --- a program in a pid namespace of its own (a container): its thread ids are translated
PROFD_LIVE=$BUS PROFD_LIVE_HZ=499 unshare --pid --fork --mount-proc "${AS_NOBODY[@]}" "$WORKLOAD_SCANNER" \
	--chunks 20 >"$T/ns" 2>"$T/ns.err" || fail "the scanner in a pid namespace: $(cat "$T/ns" "$T/ns.err")"
grep -q '^finish stored$' "$T/ns" || fail "the run in a pid namespace: $(cat "$T/ns")"
get_run "$(run_id_of "$T/ns")" "$T/rec8" "${AS_NOBODY[@]}"
got=$(record_field "$T/rec8" 'r["profd"]["spans"]["kept"], r["profd"]["spans"]["threads"], r["profd"]["spans"]["ring_errors"], r["profd"]["unstaged"]["samples"] <= 0.05 * r["profd"]["samples"], all(s["profd"]["samples"] > 0 for s in r["stages"])')
[[ $got == "(160, 2, 0, True, True)" ]] || fail "the run in a pid namespace: kept, threads, errors, staged, every stage sampled = $got"
ok "a program in its own pid namespace: its threads' spans joined with their samples"
