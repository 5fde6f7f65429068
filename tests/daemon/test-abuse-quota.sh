#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Abuse: floods against the limits. uid 65534 submits many small runs and
# twenty 1-MB records, runs more finished sessions and more running sessions
# than it may, and holds exports into stopped terminals to pin requests.
# Its quotas evict only its own oldest runs and sessions (uid 2's and root's
# stay), big stored records are not kept in memory (each is over an eighth of
# RunCacheBytes: profd's RSS grows by far less than what was sent), running sessions and requests in progress stop at
# its quota while uid 2 and root still get theirs. The fifth request is sent
# only once profd holds the four pinned ones (their copy threads run, however
# long a loaded machine takes; never reaching it fails), so its refusal is the
# quota's: a profd without the quota serves it and fails the test.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}" "${PROFCTL:?}" "${EXPORT_FD3:?}" "${SUBMIT_THEN_LIST:?}"

cat >"$T/profd.conf" <<'EOC'
[Profiler]
MaxSessions=6
MaxSessionsPerUser=2
MaxRunsPerUser=20
MaxRunBytesPerUser=8388608
MaxRecordBytes=2097152
MaxFinishedSessionsPerUser=2
MaxRequestsPerUser=4
EOC
start_bus
# under AddressSanitizer: a quarantine smaller than the flood, and memory given back, so that
# RSS shows what profd keeps rather than what the sanitizer holds on to
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:thread_local_quarantine_size_kb=64:allocator_release_to_os_interval_ms=50"
start_profd

nobody() {
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR "$@"
}
other() {
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR "$@"
}
spawn_workload "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 600 1
nobody_target=$SPAWNED
spawn_workload "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 600 1
other_target=$SPAWNED
spawn_workload "$WORKLOAD_SPLIT" 600 1
root_target=$SPAWNED

# what the others own before the flood
for i in 1 2 3; do other SubmitRun s "$(record_with_id "other-$i")" >/dev/null; done
for i in 1 2; do mgr SubmitRun s "$(record_with_id "root-$i")" >/dev/null; done
other_session=$(finished_session "${AS_OTHER[@]}" "$other_target" 99 200000)
root_session=$(finished_session "$root_target" 99 200000)
health_before

# runs: thirty small ones, then twenty of 1 MB
for i in $(seq 30); do
	nobody SubmitRun s "$(record_with_id "flood-$i")" >/dev/null || fail "SubmitRun $i of uid 65534 failed"
done
held=$(nobody ListRuns | awk '{ print $2 }')
((held == 20)) || fail "uid 65534 holds $held runs, its quota is 20"
nobody GetRun s flood-30 >/dev/null || fail "uid 65534's newest run was evicted"
expect_error org.profd.Profiler1.Error.NoSuchRun nobody GetRun s flood-1 >/dev/null
python3 - "$FIXTURES_DIR/valid/full.json" "$T" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
r["padding"] = "x" * 1000000
for i in range(20):
    r["identity"]["run_id"] = f"big-{i}"
    with open(f"{sys.argv[2]}/big-{i}.json", "w") as f:
        json.dump(r, f)
EOP
rss_before=$(profd_rss_kb)
for i in $(seq 0 19); do
	as_nobody "$PROFCTL" --address="$BUS" run submit "$T/big-$i.json" >/dev/null ||
		fail "submitting 1-MB record $i failed"
done
rss=$(profd_rss_kb)
((rss - rss_before < 20000 / 4)) ||
	fail "20 MB of records took profd's RSS from $rss_before to $rss KiB: they are kept in memory"
nobody GetRun s big-19 | grep -q padding || fail "the newest 1-MB record cannot be read back"
((($(du -sk "$T/state/runs" | cut -f1)) < 8192 + 2048)) || fail "uid 65534 stores more than its 8 MiB"
for i in 1 2 3; do other GetRun s "other-$i" >/dev/null || fail "uid $OTHER's run other-$i was evicted"; done
for i in 1 2; do mgr GetRun s "root-$i" >/dev/null || fail "root's run root-$i was evicted"; done
ok "run floods evict only uid 65534's own runs; 20 MB of records moved RSS $rss_before -> $rss KiB"

# big records are parsed off the bus thread: on one connection, four big SubmitRuns and then a
# ListRuns, sent without waiting; a loop that parsed records would answer in the order sent
order=$(as_nobody "$SUBMIT_THEN_LIST" "$BUS" "$T"/big-{0,1,2,3}.json) ||
	fail "pipelined SubmitRuns and ListRuns: $order"
before=$(sed -n '/^list$/q;p' <<<"$order" | grep -c '^submit' || true)
((before < 4)) || fail "ListRuns was answered only after the four big SubmitRuns: $(echo $order)"
ok "ListRuns answered while $((4 - before)) of four big records were still being stored"

# finished sessions: uid 65534's quota of 2 keeps its newest two, nobody else's go
for i in 1 2 3 4; do
	last=$(finished_session "${AS_NOBODY[@]}" "$nobody_target" 99 200000)
done
n=$(nobody ListSessions | awk '{ print $2 }')
((n == 2)) || fail "uid 65534 keeps $n finished sessions, its quota is 2"
[[ $(prop "$last" State) == completed ]] || fail "uid 65534's newest session was released"
[[ $(prop "$other_session" State) == completed && $(prop "$root_session" State) == completed ]] ||
	fail "another user's finished session was released"
ok "finished-session floods release only uid 65534's oldest"

# running sessions: two for uid 65534, and still room for uid 2 and root
a=$(nobody StartSession 'uuta{sv}' "$nobody_target" 99 30000000 0 | awk '{ print $3 }' | tr -d '"')
b=$(nobody StartSession 'uuta{sv}' "$nobody_target" 99 30000000 0 | awk '{ print $3 }' | tr -d '"')
[[ -n $a && -n $b ]] || fail "uid 65534 could not start two sessions"
expect_error org.profd.Profiler1.Error.TooManySessions \
	nobody StartSession 'uuta{sv}' "$nobody_target" 99 1000000 0 >/dev/null
c=$(other StartSession 'uuta{sv}' "$other_target" 99 30000000 0 | awk '{ print $3 }' | tr -d '"')
d=$(start_session "$root_target" 99 30000000)
[[ -n $c && -n $d ]] || fail "uid $OTHER or root could not start a session beside uid 65534's two"
for p in "$a" "$b" "$c" "$d"; do
	bctl call $DEST "$p" $SES Stop
	wait_finished "$p" >/dev/null
done
ok "running sessions: uid 65534 stops at 2, uid $OTHER and root still start theirs"

# requests in progress: four exports into stopped terminals pin uid 65534's quota of 4
stall_terminals "$T/ptys" 4 "$BUS" "$b" folded $NOBODY
# once profd holds the four (each copies on a thread of its own), a fifth is refused for as long
# as they stall. No fifth is tried before: while one is being answered it takes a place in the
# quota, and a call of the four arriving then would be refused (neither profd's fd count nor the
# callers' processes tell when the four are in; its threads do)
wait_until 120 profd_threads_at_least profd-export 4 ||
	fail "profd never held the four stalled exports: $(profd_threads_named profd-export) copy" \
		"threads; $(cat "$T/ptys/pending") of the four calls still wait; their errors:" \
		"$(cat "$T"/ptys/call-*.err)"
msg=$(expect_error org.freedesktop.DBus.Error.LimitsExceeded \
	as_nobody busctl --address="$BUS" call $DEST "$b" $SES Export s folded)
[[ $msg == *MaxRequestsPerUser* ]] || fail "the fifth request's refusal does not name the quota: $msg"
other_served
as_other busctl --address="$BUS" call $DEST "$other_session" $SES Export s folded >/dev/null ||
	fail "uid $OTHER's Export failed while uid 65534's requests are pinned"
ok "requests in progress stop at uid 65534's quota of 4; uid $OTHER is served: $msg"
drain_terminals "$T/ptys"
for p in "$a" "$b" "$c" "$d"; do
	bctl call $DEST "$p" $SES Release
done
health_after "quota floods" $((16 * 1024))
