#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The run store through SubmitRun/GetRun/ListRuns/DeleteRun with every
# keyhog-profile-v1 fixture: valid records come back equal, invalid ones are
# refused with InvalidRecord naming the field, oversized ones too.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}"

echo "MaxRecordBytes=16384" >"$T/profd.conf"
start_bus
start_profd

# same_record SUBMITTED RETURNED: equal, except that fields absent on input
# come back with their defaults (null, or [] for states)
same_record() {
	python3 - "$1" "$2" <<'EOP'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.loads(json.load(open(sys.argv[2]))["data"][0])
def same(x, y, path):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in x:
            if k not in y:
                sys.exit(f"{path}.{k}: missing from GetRun")
            same(x[k], y[k], f"{path}.{k}")
        for k in y:
            if k not in x and y[k] not in (None, []):
                sys.exit(f"{path}.{k}: GetRun added {y[k]!r}")
    elif isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            sys.exit(f"{path}: {len(x)} items submitted, {len(y)} returned")
        for i, (p, q) in enumerate(zip(x, y)):
            same(p, q, f"{path}[{i}]")
    elif x != y or type(x) != type(y):
        sys.exit(f"{path}: submitted {x!r}, returned {y!r}")
same(a, b, "$")
EOP
}

n=0
for f in "$FIXTURES_DIR"/valid/*.json; do
	run_id=$(mgr SubmitRun s "$(cat "$f")" | cut -d' ' -f2 | tr -d '"') ||
		fail "SubmitRun refused $(basename "$f")"
	want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["identity"]["run_id"])' "$f")
	[[ $run_id == "$want" ]] || fail "SubmitRun of $(basename "$f") returned '$run_id', not '$want'"
	bctl --json=short call $DEST $MGR_PATH $MGR GetRun s "$run_id" >"$T/got.json"
	why=$(same_record "$f" "$T/got.json" 2>&1) || fail "$(basename "$f"): GetRun differs: $why"
	n=$((n + 1))
done
ok "$n valid fixtures accepted, GetRun returns each unchanged"

# u64 max: kept exactly, or refused naming the field; never changed
f=$FIXTURES_DIR/edge/edge-u64-max.json
if run_id=$(mgr SubmitRun s "$(cat "$f")" 2>/dev/null | cut -d' ' -f2 | tr -d '"') && [[ -n $run_id ]]; then
	bctl --json=short call $DEST $MGR_PATH $MGR GetRun s "$run_id" >"$T/got.json"
	why=$(same_record "$f" "$T/got.json" 2>&1) || fail "u64 max changed: $why"
	ok "u64 max kept exactly"
else
	msg=$(expect_error org.profd.Profiler1.Error.InvalidRecord mgr SubmitRun s "$(cat "$f")")
	[[ $msg == *wall_time_ns* ]] || fail "u64 max refused without naming wall_time_ns: $msg"
	ok "u64 max refused naming the field: $msg"
fi

declare -A field=(
	[invalid-cache-state]=identity.cache_state
	[invalid-float-for-integer]=input_bytes
	[invalid-foreign-schema]=schema
	[invalid-missing-resources]=resources
	[invalid-missing-run-id]=identity.run_id
	[invalid-negative]='transitions[1].elapsed_ns'
	[invalid-not-object]=
	[invalid-stages-not-array]=stages
	[invalid-status-case]=status
	[invalid-string-for-integer]=identity.scanner_threads
	[invalid-truncated]=
	[invalid-u64-overflow]=wall_time_ns
	[invalid-unknown-stage]='stages[0].stage'
)
runs_before=$(mgr ListRuns | cut -d' ' -f2)
n=0
for f in "$FIXTURES_DIR"/invalid/*.json; do
	name=$(basename "$f" .json)
	[[ -v field[$name] ]] || fail "no expectation for fixture $name"
	msg=$(expect_error org.profd.Profiler1.Error.InvalidRecord mgr SubmitRun s "$(cat "$f")")
	[[ -n $msg ]] || fail "$name refused without a message"
	[[ -z ${field[$name]} || $msg == *"${field[$name]}"* ]] ||
		fail "$name: the error does not name ${field[$name]}: $msg"
	n=$((n + 1))
done
[[ $(mgr ListRuns | cut -d' ' -f2) == "$runs_before" ]] || fail "a refused record was stored"
ok "$n invalid fixtures refused with InvalidRecord naming the field"

# larger than MaxRecordBytes
python3 - "$FIXTURES_DIR/valid/full.json" >"$T/big.json" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
r["padding"] = "x" * 20000
print(json.dumps(r))
EOP
msg=$(expect_error org.profd.Profiler1.Error.InvalidRecord mgr SubmitRun s "$(cat "$T/big.json")")
[[ $msg == *16384* ]] || fail "the oversized record's error does not state the limit: $msg"
ok "oversized record refused: $msg"

# list, delete, and errors for runs that are not there
mgr ListRuns | grep -q '"77-1764460800000000001-3" "failed"' || fail "ListRuns lacks the sparse run"
mgr DeleteRun s 77-1764460800000000001-3
expect_error org.profd.Profiler1.Error.NoSuchRun mgr GetRun s 77-1764460800000000001-3 >/dev/null
expect_error org.profd.Profiler1.Error.NoSuchRun mgr DeleteRun s 77-1764460800000000001-3 >/dev/null
! mgr ListRuns | grep -q '"77-1764460800000000001-3"' || fail "a deleted run is still listed"
ok "DeleteRun, then NoSuchRun"

# records kept in memory (RunCacheBytes, on by default) answer GetRun only as their files would:
# a replaced run's new record, never a deleted run's, never another uid's, whether a record was
# kept when it was stored or, after a restart, when it was read
full_with_id() { sed "s/4242-1764460800000000000-0/$1/" "$FIXTURES_DIR/valid/full.json"; }
status_of() { mgr GetRun s "$1" | grep -o 'status\\":\\"[a-z]*' | grep -o '[a-z]*$'; }
for id in kept-a kept-b; do mgr SubmitRun s "$(record_with_id $id)" >/dev/null; done
as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR SubmitRun s "$(full_with_id kept-b)" >/dev/null
for kept in "when stored" "when read after a restart"; do
	# twice: after a restart the first read keeps the record, the second is answered from memory
	[[ $(status_of kept-a) == failed && $(status_of kept-a) == failed ]] ||
		fail "kept-a ($kept) is not the record submitted"
	mgr SubmitRun s "$(full_with_id kept-a)" >/dev/null
	[[ $(status_of kept-a) == completed ]] || fail "kept-a ($kept): GetRun serves the replaced record"
	expect_error org.profd.Profiler1.Error.NoSuchRun \
		as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR GetRun s kept-a >/dev/null
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR GetRun s kept-b | grep -q completed ||
		fail "uid $OTHER ($kept) is not served its own kept-b but root's"
	[[ $(status_of kept-b) == failed ]] || fail "root ($kept) is served uid $OTHER's kept-b"
	mgr DeleteRun s kept-a
	expect_error org.profd.Profiler1.Error.NoSuchRun mgr GetRun s kept-a >/dev/null
	# root sees another uid's run of the id once its own is gone: uid $OTHER's, not the deleted one
	mgr DeleteRun s kept-b
	[[ $(status_of kept-b) == completed ]] || fail "root ($kept) is served its deleted kept-b"
	# the same runs again, for a profd that has only their files
	mgr SubmitRun s "$(record_with_id kept-a)" >/dev/null
	mgr SubmitRun s "$(record_with_id kept-b)" >/dev/null
	stop_profd
	start_profd
done
ok "records kept in memory: replaced ones served new, deleted ones gone, another uid refused"

# the daemon still serves
bctl get-property $DEST $MGR_PATH $MGR Version >/dev/null || fail "profd stopped answering"
