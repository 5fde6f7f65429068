#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The D-Bus API as DESIGN.md §6 specifies it, driven by busctl: introspection,
# a session on workload-split through sampling -> resolving -> completed with
# PropertiesChanged and Finished, and exports that agree with each other.
source "$(dirname "$0")/lib.sh"

start_bus
start_profd

# --- introspection: every member with its signature
members() { # PATH INTERFACE -> "name type signature result" lines
	bctl introspect --xml-interface $DEST "$1" | python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
for i in root.findall("interface"):
    if i.get("name") != sys.argv[1]: continue
    for m in i.findall("method"):
        ins = "".join(a.get("type") for a in m.findall("arg") if a.get("direction", "in") == "in")
        outs = "".join(a.get("type") for a in m.findall("arg") if a.get("direction") == "out")
        print("method", m.get("name"), ins or "-", outs or "-")
    for p in i.findall("property"):
        print("property", p.get("name"), p.get("type"), p.get("access"))
    for s in i.findall("signal"):
        print("signal", s.get("name"), "".join(a.get("type") for a in s.findall("arg")) or "-")
' "$2" | sort
}

expected_manager=$(sort <<'EOM'
method StartSession uuta{sv} so
method ListSessions - a(sous)
method ListRuns - a(sssstt)
method ListRunsRange tu a(sssstt)t
method GetRun s s
method SubmitRun s s
method DeleteRun s -
method BeginRun a{sv} soh
method FinishRun ss -
property Version s read
property Backends as read
property DefaultHz u read
property MaxHz u read
property MaxDurationUSec t read
EOM
)
got=$(members $MGR_PATH $MGR)
[[ $got == "$expected_manager" ]] || fail "manager interface differs:
$(diff <(echo "$expected_manager") <(echo "$got"))"
ok "manager interface as specified"

[[ $(bctl get-property $DEST $MGR_PATH $MGR DefaultHz) == "u 99" ]] || fail "DefaultHz is not 99"
bctl get-property $DEST $MGR_PATH $MGR Backends | grep -q '"perf-dwarf"' ||
	fail "Backends lacks perf-dwarf"

# --- a session, watched by a monitor
bctl monitor --json=short $DEST >"$T/monitor.json" 2>/dev/null &
MONITOR=$!
CHILDREN+=("$MONITOR")
spawn_workload 2 "$WORKLOAD_SPLIT" 120 2 # outlives the session: its exit must not end the window
target=$SPAWNED
# a long window ended by Stop: a loaded machine cannot end it before we look (60 s, as long
# as the wait for its samples below may take)
path=$(start_session "$target" 499 60000000)
[[ $path == /org/profd/Profiler1/session/* ]] || fail "StartSession returned '$path'"
state=$(prop "$path" State)
[[ $state == sampling ]] || fail "a new session is $state, not sampling"
[[ $(prop "$path" Target) == "pid:$target" ]] || fail "Target is '$(prop "$path" Target)', not pid:$target"

expected_session=$(sort <<'EOM'
method Stop - -
method Export s ay
method ExportToFd sh -
method ExportFilteredToFd sa{sv}h -
method GetMetrics - s
method Release - -
signal Finished s
property Id s read
property Pid u read
property Target s read
property State s read
property Backend s read
property Event s read
property RequestedHz u read
property Hz u read
property RequestedDurationUSec t read
property DurationUSec t read
property Clamped b read
property SamplesCaptured t read
property SamplesDropped t read
property ThreadsSeen u read
property ThreadsAtStart u read
property BufferFull b read
property RunId s read
property Error s read
EOM
)
got=$(members "$path" $SES)
[[ $got == "$expected_session" ]] || fail "session interface differs:
$(diff <(echo "$expected_session") <(echo "$got"))"
bctl introspect $DEST /org/profd/Profiler1/session | grep -q "${path##*/}" ||
	bctl tree $DEST | grep -q "$path" || fail "the session is not listed under its parent"
ok "session interface as specified"

# the window: until the samples make a clear split (SamplesCaptured is live), however
# long the target's share of a loaded machine takes to give them
enough_samples() { (($(prop "$path" SamplesCaptured) >= 600)); }
wait_until 60 enough_samples || fail "only $(prop "$path" SamplesCaptured) samples in a minute"
bctl call $DEST "$path" $SES Stop
[[ $(wait_finished "$path") == completed ]] || fail "session failed: $(prop "$path" Error)"
# the monitor may lag behind on a loaded machine: wait for the last signal to reach it
wait_until 30 grep -q '"member":"Finished"' "$T/monitor.json" ||
	fail "the monitor never saw Finished"
kill "$MONITOR"
wait "$MONITOR" 2>/dev/null || true

# sampling -> resolving -> completed announced in order, then Finished("completed")
seq=$(python3 - "$T/monitor.json" "$path" <<'EOP'
import json, sys
out = []
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("path") != sys.argv[2] or m.get("type") != "signal":
        continue
    data = m["payload"]["data"]
    if m["member"] == "PropertiesChanged" and "State" in data[1]:
        out.append(data[1]["State"]["data"])
    elif m["member"] == "Finished":
        out.append("Finished:" + data[0])
print(" ".join(out))
EOP
)
[[ $seq == "resolving completed Finished:completed" ]] ||
	fail "state announcements were '$seq', not 'resolving completed Finished:completed'"
ok "State sampling -> resolving -> completed with PropertiesChanged and Finished"

captured=$(prop "$path" SamplesCaptured)
(( captured >= 600 )) || fail "SamplesCaptured went down to $captured after Stop"
(( $(prop "$path" DurationUSec) < 60000000 )) || fail "Stop did not shorten the window"
[[ $(prop "$path" ThreadsAtStart) == 2 ]] || fail "ThreadsAtStart is not 2"
[[ $(prop "$path" Hz) == 499 ]] || fail "Hz is not 499"
[[ $(prop "$path" Clamped) == false ]] || fail "a plain request was reported clamped"

# --- exports agree with each other and with the properties
bctl --json=short call $DEST "$path" $SES Export s folded |
	python3 -c 'import json,sys; sys.stdout.buffer.write(bytes(json.load(sys.stdin)["data"][0]))' \
		>"$T/folded"
folded_total=$(awk '{ n += $NF } END { print n }' "$T/folded")
[[ $folded_total == "$captured" ]] ||
	fail "folded export counts $folded_total samples, SamplesCaptured is $captured"
heavy=$(awk '/split_heavy/ { n += $NF } END { print n + 0 }' "$T/folded")
light=$(awk '/split_light/ { n += $NF } END { print n + 0 }' "$T/folded")
# 3:1 in CPU time (fixed work per call): 75% within 3 standard errors and 2 points
python3 - "$heavy" "$light" <<'EOP' ||
import math, sys
heavy, light = int(sys.argv[1]), int(sys.argv[2])
n = heavy + light
assert n > 0 and abs(heavy / n - 0.75) <= 0.02 + 3 * math.sqrt(0.75 * 0.25 / n)
EOP
	fail "split_heavy ($heavy) and split_light ($light) are not 3:1"
ok "Export folded: $folded_total samples, heavy $heavy : light $light"

"$EXPORT_TO_FD" "$BUS" "$path" pprof "$T/profile.pb.gz" 2>/dev/null ||
	fail "ExportToFd pprof failed"
[[ $(head -c 2 "$T/profile.pb.gz" | od -An -tx1 | tr -d ' ') == 1f8b ]] ||
	fail "the pprof export is not gzip"
if command -v go >/dev/null; then
	pprof_total=$(HOME=$T GOCACHE=$T/go go tool pprof -raw -symbolize=none "$T/profile.pb.gz" 2>/dev/null |
		awk '/^Samples:/ { on = 1; getline; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ / { n += $1 } END { print n + 0 }')
	[[ $pprof_total == "$captured" ]] ||
		fail "pprof export counts $pprof_total samples, SamplesCaptured is $captured"
fi
ok "ExportToFd pprof: gzip, same sample count"

metrics=$(bctl --json=short call $DEST "$path" $SES GetMetrics | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0])')
python3 - "$captured" <<EOP || fail "GetMetrics disagrees with the properties: $metrics"
import json, sys
m = json.loads('''$metrics''')
assert m["samples_captured"] == int(sys.argv[1]), m["samples_captured"]
assert m["hz"] == 499 and m["backend"] == "perf-dwarf" and m["threads_at_start"] == 2, m
EOP
ok "GetMetrics agrees"

# --- the session's run record
run_id=$(prop "$path" RunId)
[[ -n $run_id ]] || fail "a completed session has no RunId"
bctl --json=short call $DEST $MGR_PATH $MGR GetRun s "$run_id" >"$T/run.json"
bctl --json=short call $DEST "$path" $SES Export s record >"$T/record.json"
build_id=$(readelf -n "$WORKLOAD_SPLIT" 2>/dev/null | awk '/Build ID/ { print $3 }')
python3 - "$T/run.json" "$T/record.json" "$run_id" "$build_id" <<'EOP' || fail "the run record is wrong"
import json, sys
run = json.loads(json.load(open(sys.argv[1]))["data"][0])
rec = json.loads(bytes(json.load(open(sys.argv[2]))["data"][0]))
assert run == rec, "GetRun and the record export differ"
i = run["identity"]
assert i["run_id"] == sys.argv[3]
assert i["binary_version"].startswith("profd "), i
assert i["source_kind"] == "pid" and i["daemon_state"] == "worker", i
assert i["workload_class"] == "workload-split", i
assert i["backend_requested"] == "auto" and i["backend_selected"] == "perf-dwarf", i
assert i["scanner_threads"] == 2 and i["reader_threads"] is None, i
assert i["cache_state"] in ("cold", "warm"), i
if sys.argv[4]:
    assert i["detector_digest"] == sys.argv[4], (i["detector_digest"], sys.argv[4])
states = [t["state"] for t in run["transitions"]]
assert states == ["created", "acquiring", "scanning", "resolving", "reporting", "completed"], states
assert [s["state"] for s in run["resource_samples"]] == states
assert run["status"] == "completed" and run["stages"] == []
assert run["input_units"] > 0 and run["input_bytes"] > 0
EOP
mgr ListRuns | grep -q "\"$run_id\" \"completed\" \"pid\" \"workload-split\"" ||
	fail "ListRuns does not list $run_id: $(mgr ListRuns)"
ok "run record $run_id: identity, transitions, GetRun == Export record"

# --- Release forgets the session and keeps the run
mgr ListSessions | grep -q "$path" || fail "ListSessions lacks the session"
bctl call $DEST "$path" $SES Release
expect_error org.freedesktop.DBus.Error.UnknownObject \
	bctl get-property $DEST "$path" $SES State >/dev/null
[[ $(mgr ListSessions) == "a(sous) 0" ]] || fail "a released session is still listed"
mgr GetRun s "$run_id" >/dev/null || fail "Release lost the run record"
ok "Release"

stop_profd
[[ $PROFD_RC == 0 ]] || fail "profd exited $PROFD_RC on SIGTERM, not 0"
ok "SIGTERM: exit 0"
