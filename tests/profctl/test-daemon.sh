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
"$WORKLOAD_SPLIT" 20 1 &
CHILDREN+=($!)
target=$!
bctl call $DEST $MGR_PATH $MGR StartSession uuta{sv} "$target" 499 20000000 0 >"$T/start" ||
	fail "StartSession failed"
id=$(awk '{ gsub(/"/, "", $2); print $2 }' "$T/start")
pc sessions | grep -qE "^$id +$target +sampling" || fail "sessions does not list '$id' sampling: $(pc sessions)"
pc status "$id" | grep -qE "^ +State: sampling$" || fail "status: $(pc status "$id")"
pc --json status "$id" | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["Pid"] == int(sys.argv[1])' "$target" ||
	fail "status --json lacks Pid"
ok "sessions and status show the running session"

sleep 1
pc stop "$id" || fail "stop failed"
for _ in $(seq 100); do
	[[ $(pc --json status "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["State"])') == completed ]] && break
	sleep 0.1
done
pc export "$id" -f folded -o "$T/out.folded" || fail "export folded failed"
grep -qE "split_heavy [0-9]+$|;split_heavy [0-9]+$" "$T/out.folded" || fail "folded export lacks split_heavy: $(head -5 "$T/out.folded")"
pc export "$id" -f pprof >"$T/out.pb.gz" || fail "export pprof to stdout failed"
gzip -t "$T/out.pb.gz" || fail "pprof export is not gzip"
ok "stop, then export to a file and to stdout"

pc export "$id" -f nonsense -o "$T/bad" 2>"$T/err" && fail "an unknown format was accepted"
[[ -e $T/bad ]] && fail "a failed export left its output file"
grep -q "cannot export session '$id'" "$T/err" || fail "unclear error: $(cat "$T/err")"
pc status nosuchsession 2>"$T/err" && fail "status of a missing session succeeded"
grep -q "no such session" "$T/err" || fail "unclear error: $(cat "$T/err")"
ok "unknown format and unknown session fail clearly"
