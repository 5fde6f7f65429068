#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Abuse: control characters aimed at root's terminal. uid 65534 puts ESC,
# CR, LF, BEL and C1 (CSI) characters in run ids and other identity strings,
# in workload_class, and in the name of the process it profiles. profd
# refuses them at input (the name of a process is sanitized), sets aside a
# stored record that has them, and profctl escapes control characters in
# whatever it prints, a local record file included.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}" "${PROFCTL:?}"

start_bus
start_profd
health_before

nobody() {
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR "$@"
}
with_identity() { # FIELD VALUE: the full fixture with identity.FIELD = VALUE (a Python literal)
	python3 - "$FIXTURES_DIR/valid/full.json" "$1" "$2" <<'EOP'
import ast, json, sys
r = json.load(open(sys.argv[1]))
r["identity"][sys.argv[2]] = ast.literal_eval(sys.argv[3])
print(json.dumps(r))
EOP
}

for value in '"a\x1b[2Jb"' '"line\nfeed"' '"carriage\rreturn"' '"bell\x07"' '"csi\u009b31m"' '"del\x7f"'; do
	for field in run_id workload_class source_kind config_digest; do
		msg=$(expect_error org.profd.Profiler1.Error.InvalidRecord \
			nobody SubmitRun s "$(with_identity "$field" "$value")")
		[[ $msg == *"identity.$field"*control* ]] ||
			fail "identity.$field = $value was not refused by name: $msg"
	done
done
ok "identity strings with ESC, LF, CR, BEL, CSI or DEL refused, naming the field"

mkdir -m 777 "$T/w"
spawn "${AS_NOBODY[@]}" /usr/bin/python3 -c '
import ctypes, time
ctypes.CDLL(None).prctl(15, b"\x9b31m\x01evil", 0, 0, 0)  # PR_SET_NAME
open("'"$T"'/w/renamed", "w").close()
end = time.time() + 300
while time.time() < end:
	pass'
target=$SPAWNED
wait_until 30 test -e "$T/w/renamed" || fail "the oddly named process did not start"
msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs \
	nobody StartSession 'uuta{sv}' "$target" 99 300000 1 workload_class s $'\e]0;owned\a')
[[ $msg != *$'\e'* && $msg != *$'\a'* ]] || fail "the refusal quotes the control characters raw"
path=$(nobody StartSession 'uuta{sv}' "$target" 99 300000 0 | awk '{ print $3 }' | tr -d '"')
[[ $(wait_finished "$path") == completed ]] || fail "the session of the oddly named process failed"
run=$(prop "$path" RunId)
bctl --json=short call $DEST $MGR_PATH $MGR GetRun s "$run" >"$T/run.json"
python3 - "$T/run.json" <<'EOP' || fail "the process name reached the record with its control characters"
import json, sys
w = json.loads(json.load(open(sys.argv[1]))["data"][0])["identity"]["workload_class"]
assert w == "?31m?evil", repr(w)
EOP
ok "workload_class refused with control characters; a process name has them replaced"

# stored before profd refused them: set aside at start, never listed
stop_profd
python3 - "$FIXTURES_DIR/valid/full.json" "$T/state/runs/00000000000000f0.run" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
r["identity"]["run_id"] = "old\x1b]2;owned\x07"
with open(sys.argv[2], "w") as f:
    f.write("profd-run-v1 owner=65534 finished_usec=1\n" + json.dumps(r) + "\n")
EOP
start_profd
[[ -f $T/state/runs/00000000000000f0.run.corrupt ]] || fail "a stored run with control characters was not set aside"
grep -q "00000000000000f0.run.*control" "$T/profd.log" || fail "setting it aside was not logged with the reason"
ok "a stored run with control characters is set aside at start"

# profctl escapes what it prints
"$PROFCTL" --address="$BUS" runs >"$T/runs.txt"
! grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$T/runs.txt" || fail "profctl runs printed control characters"
grep -q '?31m?evil' "$T/runs.txt" || fail "profctl runs lacks the sanitized run"
with_identity workload_class '"x\x1b[2J\u009b1m"' >"$T/local.json"
"$PROFCTL" run render "$T/local.json" >"$T/render.txt" || fail "profctl run render failed"
! grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$T/render.txt" ||
	fail "profctl run render printed control characters"
grep -qF 'x\x1b[2J\xc2\x9b1m' "$T/render.txt" || fail "profctl run render does not show them escaped: $(head -n 3 "$T/render.txt")"
ok "profctl escapes control characters in runs and run render"
HEALTH_FDS=$(profd_fds)
health_after "control characters"
