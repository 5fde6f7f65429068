#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Abuse: replies larger than the bus's message limit. dbus-daemon drops a
# connection that sends a message over max_message_size (64 KiB on this
# test's bus), and profd cannot live without its bus. uid 65534 tries to make
# a reply grow past it: huge identity strings (run_id, workload_class),
# many runs for ListRuns, long strings echoed in errors. Identity strings
# are refused, ListRuns is cut at MaxListBytes with ListRunsRange (and
# profctl runs) reaching every run, errors quote at most a short prefix; profd
# keeps serving, also after a restart.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}" "${PROFCTL:?}"

BUS_LIMITS='<limit name="max_message_size">65536</limit>'
cat >"$T/profd.conf" <<'EOC'
[Profiler]
MaxRecordBytes=16384
MaxExportBytes=16384
MaxListBytes=8192
EOC
start_bus
start_profd
health_before

nobody() {
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR "$@"
}
long() { # N: a string of N bytes
	head -c "$1" /dev/zero | tr '\0' r
}

# identity strings past 256 bytes, within MaxRecordBytes: refused, naming the field
msg=$(expect_error org.profd.Profiler1.Error.InvalidRecord nobody SubmitRun s "$(record_with_id "$(long 12000)")")
[[ $msg == *run_id* && ${#msg} -lt 300 ]] || fail "a 12000-byte run_id was refused without naming it briefly: ${msg:0:300}"
python3 - "$FIXTURES_DIR/valid/full.json" >"$T/wide.json" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
r["identity"]["run_id"] = "wide"
r["identity"]["workload_class"] = "w" * 12000
print(json.dumps(r))
EOP
msg=$(expect_error org.profd.Profiler1.Error.InvalidRecord nobody SubmitRun s "$(cat "$T/wide.json")")
[[ $msg == *workload_class* ]] || fail "a 12000-byte workload_class was not refused by name: ${msg:0:300}"
spawn_workload "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 1
target=$SPAWNED
msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs \
	nobody StartSession 'uuta{sv}' "$target" 99 1000000 1 workload_class s "$(long 12000)")
((${#msg} < 300)) || fail "the refusal of a long workload_class is ${#msg} bytes long"
ok "identity strings over 256 bytes refused: $msg"

# many runs with the longest ids allowed: ListRuns keeps within MaxListBytes, the rest by page
n=100
for i in $(seq $n); do
	nobody SubmitRun s "$(record_with_id "$(printf 'r%03d-%s' "$i" "$(long 250)")")" >/dev/null ||
		fail "SubmitRun $i with a 254-byte id failed"
done
bctl --json=short call $DEST $MGR_PATH $MGR ListRuns >"$T/list.json" || fail "ListRuns failed"
bytes=$(stat -c %s "$T/list.json")
listed=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["data"][0]))' "$T/list.json")
((listed > 0 && listed < n)) || fail "ListRuns listed $listed of $n runs of 254-byte ids within 8 KiB"
python3 - "$T/list.json" <<'EOP' || fail "ListRuns does not return the newest runs"
import json, sys
ids = [r[0] for r in json.load(open(sys.argv[1]))["data"][0]]
assert ids[-1].startswith("r100-"), ids[-1][:8]
assert ids == sorted(ids), "not oldest first"
EOP
offset=0
: >"$T/paged"
while :; do
	bctl --json=short call $DEST $MGR_PATH $MGR ListRunsRange tu "$offset" 0 >"$T/page.json" ||
		fail "ListRunsRange $offset failed"
	read -r got total < <(python3 - "$T/page.json" "$T/paged" <<'EOP'
import json, sys
data = json.load(open(sys.argv[1]))["data"]
with open(sys.argv[2], "a") as f:
    for r in data[0]:
        f.write(r[0][:4] + "\n")
print(len(data[0]), data[1])
EOP
	)
	((got > 0)) || break
	offset=$((offset + got))
done
((total == n && $(sort -u "$T/paged" | wc -l) == n)) ||
	fail "ListRunsRange reached $(sort -u "$T/paged" | wc -l) of $n runs (total says $total)"
[[ $("$PROFCTL" --address="$BUS" runs | grep -c '^r[0-9]') == "$n" ]] ||
	fail "profctl runs does not list all $n runs"
ok "ListRuns: the newest $listed runs in $bytes bytes; ListRunsRange and profctl runs reach all $n"

# caller strings echoed in errors are cut short, whatever their size
for call in "GetRun s $(long 60000)" "DeleteRun s $(long 60000)"; do
	msg=$(expect_error org.profd.Profiler1.Error.NoSuchRun nobody $call)
	((${#msg} < 300)) || fail "an error quotes ${#msg} bytes of a 60000-byte run id"
done
msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs \
	nobody StartSession 'uuta{sv}' "$target" 99 1000000 1 "$(long 60000)" s x)
((${#msg} < 400)) || fail "the unknown-option error quotes ${#msg} bytes"
msg=$(expect_error org.freedesktop.DBus.Error.UnknownObject \
	as_nobody busctl --address="$BUS" call $DEST "/org/profd/Profiler1/session/$(long 60000)" $SES Stop)
((${#msg} < 300)) || fail "the unknown-object error quotes ${#msg} bytes of the path"
ok "errors quote at most a short prefix of what the caller sent"

# the same after a restart: nothing stored makes the next ListRuns too big
stop_profd
start_profd
mgr ListRuns >/dev/null || fail "ListRuns failed after a restart"
[[ $("$PROFCTL" --address="$BUS" runs | grep -c '^r[0-9]') == "$n" ]] || fail "runs lost across a restart"
HEALTH_FDS=$(profd_fds)
health_after "bus-message-size"
