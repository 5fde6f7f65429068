#!/usr/bin/env bash
# The run records of sampling sessions (README "Every sampling session is also
# a run", docs/record-format.md): profctl record -- CMD describes the command
# (not profctl's child), the default budget follows the command's threads,
# config_digest covers the effective request, requested and effective values
# agree across properties and metrics, and profctl --local makes the same
# record as profd.
source "$(dirname "$0")/lib.sh"
: "${PROFCTL:?PROFCTL must name the profctl binary}"

start_bus
start_profd

pc() { "$PROFCTL" --address="$BUS" "$@"; }
build_id() { readelf -n "$1" | awk '/Build ID:/ { print $3 }'; }

# --- record -- CMD: identity, resources and threads are the command's
wl_id=$(build_id "$WORKLOAD_SPLIT")
pc_id=$(build_id "$PROFCTL")
[[ -n $wl_id && -n $pc_id && $wl_id != "$pc_id" ]] || fail "cannot read the build-ids ('$wl_id', '$pc_id')"
# the command's own size once running with one thread (2 ticks of its own CPU time: past its
# loader, in its loop, however late a loaded machine let it run): at its exec it is smaller
spawn "$WORKLOAD_SPLIT" 60 1
wait_until 30 runs_program "$SPAWNED" "$WORKLOAD_SPLIT" && wait_until 30 has_run "$SPAWNED" 2 ||
	fail "the workload did not start"
running_vsize=$(awk '/^VmSize:/ { printf "%.0f\n", $2 * 1024 }' "/proc/$SPAWNED/status")
kill "$SPAWNED"

# the window (1 s) ends while the command (6 s, two threads) still runs: long enough for
# --local to name the window's samples (cold, libc's DWARF) and take the finish snapshot under
# ASan on a loaded machine (at 3 s it had exited there, and the snapshots differed)
for mode in daemon local; do
	if [[ $mode == daemon ]]; then
		pc record -d 1 -f record -o "$T/$mode.json" -- "$WORKLOAD_SPLIT" 6 2 2>"$T/err" ||
			fail "record -- CMD through profd failed: $(cat "$T/err")"
	else
		"$PROFCTL" --local record -d 1 -f record -o "$T/$mode.json" -- "$WORKLOAD_SPLIT" 6 2 \
			2>"$T/err" || fail "record --local -- CMD failed: $(cat "$T/err")"
	fi
	python3 - "$T/$mode.json" "$wl_id" "$running_vsize" "$mode" <<'EOP' || fail "the $mode record of a command does not describe it"
import json, sys
r = json.load(open(sys.argv[1])); build_id, running_vsize, mode = sys.argv[2], int(sys.argv[3]), sys.argv[4]
i = r["identity"]
assert i["detector_digest"] == build_id, ("detector_digest", i["detector_digest"], build_id)
assert i["workload_class"] == "workload-split", i["workload_class"]
assert i["scanner_threads"] == 2, ("scanner_threads", i["scanner_threads"])
assert i["daemon_state"] == ("worker" if mode == "daemon" else "off"), i["daemon_state"]
created = r["resource_samples"][0]["snapshot"]
assert r["resource_samples"][0]["state"] == "created"
# profctl's held fork had profctl's size and mappings; the command at its exec is smaller than running
assert created["thread_count"] == 1 and 0 < created["virtual_bytes"] < running_vsize, \
    ("created", created, "running vsize", running_vsize)
assert r["resources"]["max_observed_threads"] == 2, r["resources"]
resolving = [s for s in r["resource_samples"] if s["state"] == "resolving"][0]["snapshot"]
assert resolving["thread_count"] == 2 and resolving["virtual_bytes"] > created["virtual_bytes"], resolving
EOP
	ok "$mode: record -- CMD describes the command: its build-id, threads and resources"
done

# --- profctl --local and profd agree on the same command's record
python3 - "$T/daemon.json" "$T/local.json" <<'EOP' || fail "profd's and profctl --local's records of the same command disagree"
import json, sys
d, l = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("binary_version", "detector_digest", "config_digest", "source_kind", "workload_class",
          "backend_requested", "backend_selected", "scanner_threads", "reader_threads", "logical_cpus"):
    assert d["identity"][k] == l["identity"][k], (k, d["identity"][k], l["identity"][k])
assert [t["state"] for t in d["transitions"]] == [t["state"] for t in l["transitions"]], "transitions"
states = lambda r: [s["state"] for s in r["resource_samples"]]
assert states(d) == states(l), (states(d), states(l))
for a, b in zip(d["resource_samples"], l["resource_samples"]):
    sa, sb = a["snapshot"], b["snapshot"]
    assert [k for k in sa if sa[k] is None] == [k for k in sb if sb[k] is None], ("nulls", a, b)
    assert sa["thread_count"] == sb["thread_count"], ("threads", a, b)
# the same program stopped at its exec: the same mappings
assert d["resource_samples"][0]["snapshot"]["virtual_bytes"] == l["resource_samples"][0]["snapshot"]["virtual_bytes"]
assert d["resources"]["max_observed_threads"] == l["resources"]["max_observed_threads"]
assert d["input_units"] > 0 and l["input_units"] > 0
EOP
ok "profctl --local and profd agree on identity, transitions and resources"

# --- the default budget follows the command's threads (it starts with one)
pc record -d 2 -f metrics -o "$T/metrics.json" -- "$WORKLOAD_SPLIT" 4 2 2>"$T/err" ||
	fail "record -- CMD failed: $(cat "$T/err")"
python3 - "$T/metrics.json" "$(nproc)" <<'EOP' || fail "the budget did not follow the command's threads"
import json, math, sys
m = json.load(open(sys.argv[1])); cpus = int(sys.argv[2])
assert m["threads_at_start"] == 1 and m["threads_peak"] == 2, m
want = min(2, cpus) * (math.ceil(m["hz"] * m["effective_duration_nanos"] / 1e9) + 1)
assert m["ring_capacity"] == want, ("ring_capacity", m["ring_capacity"], want)
assert not m["buffer_full"] and m["end_reason"] == "duration", (m["buffer_full"], m["end_reason"])
assert m["duration_nanos"] >= m["effective_duration_nanos"], "window cut short"
EOP
ok "a two-thread command keeps its whole window: the budget grew with its second thread"

# --- config_digest: equal effective settings, equal digests
spawn "$WORKLOAD_SPLIT" 60 1
target=$SPAWNED
max_hz=$(bctl get-property $DEST $MGR_PATH $MGR MaxHz | cut -d' ' -f2)
digest() { # HZ DURATION_USEC OPTIONS...
	local path run
	path=$(start_session "$target" "$@")
	[[ $(wait_finished "$path") == completed ]] || fail "session $path did not complete"
	run=$(prop "$path" RunId)
	# (busctl's text form escapes strings C's way, which JSON does not read)
	bctl --json=short call $DEST $MGR_PATH $MGR GetRun s "$run" | python3 -c 'import json, sys
print(json.loads(json.load(sys.stdin)["data"][0])["identity"]["config_digest"])'
}
d_default=$(digest 0 200000)
d_explicit=$(digest 99 200000 4 backend s perf-dwarf event s cpu-clock stack_bytes u 16384 kernel b true)
[[ $d_default == "$d_explicit" ]] || fail "defaults and the same values given explicitly digest differently: $d_default vs $d_explicit"
d_clamped=$(digest $((max_hz * 2)) 200000)
d_max=$(digest "$max_hz" 200000)
[[ $d_clamped == "$d_max" ]] || fail "a request clamped to MaxHz digests differently from MaxHz: $d_clamped vs $d_max"
d_other=$(digest 199 200000)
[[ $d_other != "$d_default" ]] || fail "a different frequency gives the same digest"
ok "config_digest covers the effective request: equal settings, equal digests ($d_default)"

# --- requested vs effective: 0 = default stays 0; a saturated duration is clamped
metrics() { bctl --json=short call $DEST "$1" $SES GetMetrics | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0])'; }
# (DurationUSec is the planned window while sampling, the window covered once finished)
path=$(start_session "$target" 0 0)
[[ $(prop "$path" Hz) == 99 && $(prop "$path" DurationUSec) == 10000000 && $(prop "$path" Clamped) == false ]] ||
	fail "effective values of a default request: Hz $(prop "$path" Hz), DurationUSec $(prop "$path" DurationUSec), Clamped $(prop "$path" Clamped)"
bctl call $DEST "$path" $SES Stop
wait_finished "$path" >/dev/null
[[ $(prop "$path" RequestedHz) == 0 && $(prop "$path" RequestedDurationUSec) == 0 ]] ||
	fail "the defaults are not reported as requested 0"
metrics "$path" | python3 -c '
import json, sys
m = json.loads(sys.stdin.read())
assert m["requested_hz"] == 0 and m["requested_duration_nanos"] == 0, m
assert m["hz"] == 99 and m["effective_duration_nanos"] == 10 ** 10 and not m["clamped"], m' ||
	fail "metrics disagree with the properties for a default request"
path=$(start_session "$target" 99 18446744073709551615)
max_usec=$(bctl get-property $DEST $MGR_PATH $MGR MaxDurationUSec | cut -d' ' -f2)
[[ $(prop "$path" DurationUSec) == "$max_usec" ]] || fail "a saturated duration is not clamped to MaxDurationUSec"
bctl call $DEST "$path" $SES Stop
wait_finished "$path" >/dev/null
[[ $(prop "$path" RequestedDurationUSec) == 18446744073709551615 && $(prop "$path" Clamped) == true ]] ||
	fail "a saturated duration: requested $(prop "$path" RequestedDurationUSec), clamped $(prop "$path" Clamped)"
metrics "$path" | python3 -c '
import json, sys
m = json.loads(sys.stdin.read())
assert m["requested_duration_nanos"] == 2 ** 64 - 1 and m["clamped"], m' ||
	fail "metrics of a saturated duration: $(metrics "$path")"
ok "requested and effective values agree between properties and metrics"
