#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A hostile live run: a program that floods its span ring with garbage (every
# slot claimed and named with random tids, heads racing ahead and going back,
# random records, claim counters at their maximum) and then sends bad
# FinishRun calls. profd must keep serving everyone, another user's live run
# beside it must be stored whole, the hostile run is stored with what was
# valid, bounded by MaxRunSpans, and profd's descriptors and memory come back.
source "$(dirname "$0")/../daemon/lib.sh"
: "${WORKLOAD_SCANNER:?}" "${HOSTILE_RUN:?}"

echo "MaxRunSpans=5000" >"$T/profd.conf"
start_bus
start_profd
health_before

ID=hostile-$RANDOM$RANDOM
record_with_id "$ID" >"$T/record.json"
chmod 644 "$T/record.json"
spawn "${AS_NOBODY[@]}" "$HOSTILE_RUN" "$BUS" "$ID" "$T/record.json" "$T/stop" >"$T/hostile"
wait_until 60 grep -q '^live ' "$T/hostile" || fail "the hostile run did not begin: $(cat "$T/hostile")"
HOSTILE_PATH=$(awk '$1 == "live" { print $2 }' "$T/hostile")

# meanwhile: another user's live run, and the other user served in full
PROFD_LIVE=$BUS PROFD_LIVE_HZ=199 as_other "$WORKLOAD_SCANNER" --chunks 60 >"$T/clean" 2>"$T/clean.err" ||
	fail "the run beside the hostile one failed: $(cat "$T/clean" "$T/clean.err")"
grep -q '^finish stored$' "$T/clean" || fail "the run beside the hostile one: $(cat "$T/clean")"
other_served
as_other busctl --address="$BUS" --json=short call $DEST $MGR_PATH $MGR GetRun s \
	"$(awk '$1 == "live" { print $2 }' "$T/clean")" >"$T/clean.rec" || fail "GetRun of the clean run"
got=$(python3 -c 'import json,sys; r=json.loads(json.load(open(sys.argv[1]))["data"][0])["profd"]; print(r["end_reason"], r["spans"]["kept"], r["spans"]["invalid"], r["spans"]["ring_errors"])' "$T/clean.rec")
[[ $got == "finished 480 0 0" ]] || fail "the run beside the hostile one: end, kept, invalid, errors = $got"
[[ $(prop "$HOSTILE_PATH" State) == sampling ]] || fail "the hostile run is not sampling any more: $(prop "$HOSTILE_PATH" State)"
ok "during the flood: another user's live run stored whole, uid $OTHER served"

touch "$T/stop"
wait_until 120 grep -q '^finish again' "$T/hostile" || fail "the hostile program did not get its answers: $(cat "$T/hostile")"
want="finish not-json org.profd.Profiler1.Error.InvalidRecord
finish other-id org.profd.Profiler1.Error.InvalidRecord
finish own ok
finish again org.profd.Profiler1.Error.RunEnded"
[[ $(grep '^finish' "$T/hostile") == "$want" ]] || fail "the hostile FinishRun calls: $(grep '^finish' "$T/hostile")"
as_nobody busctl --address="$BUS" --json=short call $DEST $MGR_PATH $MGR GetRun s "$ID" >"$T/hostile.rec" ||
	fail "GetRun of the hostile run"
spans=$(python3 -c 'import json,sys; r=json.loads(json.load(open(sys.argv[1]))["data"][0])["profd"]; print(r["end_reason"], r["spans"])' "$T/hostile.rec")
python3 -c 'import json,sys; s=json.loads(json.load(open(sys.argv[1]))["data"][0])["profd"]["spans"]; sys.exit(not (s["kept"] <= 5000 and s["invalid"] + s["lost"] + s["ring_errors"] > 0))' "$T/hostile.rec" ||
	fail "the hostile run's spans: $spans"
ok "bad FinishRun calls refused, the hostile run stored bounded: $(grep '^flooded' "$T/hostile") rounds; $spans"
health_after "a hostile span ring"

# the same flood from a pid namespace of its own, where every made-up thread id is looked up
# in /proc: profd reads the program's threads at most once a second, so it keeps serving
health_before
ID2=hostile-ns-$RANDOM$RANDOM
record_with_id "$ID2" >"$T/record2.json"
chmod 644 "$T/record2.json"
spawn unshare --pid --fork --mount-proc "${AS_NOBODY[@]}" "$HOSTILE_RUN" "$BUS" "$ID2" "$T/record2.json" \
	"$T/stop2" >"$T/hostile2"
wait_until 60 grep -q '^live ' "$T/hostile2" || fail "the hostile run in a pid namespace did not begin: $(cat "$T/hostile2")"
PROFD_LIVE=$BUS PROFD_LIVE_HZ=199 as_other "$WORKLOAD_SCANNER" --chunks 60 >"$T/clean2" 2>"$T/clean2.err" ||
	fail "the run beside the hostile one failed: $(cat "$T/clean2" "$T/clean2.err")"
grep -q '^finish stored$' "$T/clean2" || fail "the run beside the namespaced hostile one: $(cat "$T/clean2")"
other_served
touch "$T/stop2"
wait_until 120 grep -q '^finish own' "$T/hostile2" || fail "the namespaced hostile program got no answers: $(cat "$T/hostile2")"
grep -q '^finish own ok$' "$T/hostile2" || fail "the namespaced hostile run: $(grep '^finish' "$T/hostile2")"
health_after "a hostile span ring in a pid namespace"
