#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The stack-quality report (#12) through the daemon: the sandboxed unwinder
# counts, profd checks the counts and words the report, which lands in the
# session's metrics (GetMetrics "stack_quality"), in its run record (extra
# field profd.stack_quality) and, when stacks are poor, in a short block that
# `profctl record` prints (through profd and with --local). Each defect is
# provoked and the report must name it for most of the samples the session
# took: a stripped copy of a workload (no symbols, with its build-id), code
# without CFI (with the flag that makes it), a stack
# copy smaller than the stacks (with a --stack-bytes that would hold them), JIT
# code whose perf map was removed; a clean workload is reported fine and
# nothing is printed. A cgroup's report is one over its processes: the stripped
# copy named for its process's samples, a clean workload beside it fine. With
# DEBUGINFOD_URLS set the hint no longer asks to set it.
# A report that cannot be true (a forged one, from a proxy in front of the real
# unwinder) fails that user's session only; another user's session beside it
# completes with its report.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"
source "$(dirname "$0")/cgroup-lib.sh"
: "${PROFCTL:?PROFCTL must name the profctl binary}"
: "${WORKLOAD_DEEP_STACK:?}" "${WORKLOAD_DEEP_STACK_FP:?}"
: "${WORKLOAD_JIT:?}" "${ROGUE_UNWINDER:?}" "${WORKLOAD_NOCFI:?}"

# metrics PATH: the session's GetMetrics JSON
metrics() {
	bctl --json=short call $DEST "$1" $SES GetMetrics | python3 -c 'import json, sys
print(json.load(sys.stdin)["data"][0])'
}

# check_reason JSON_FILE MODULE REASON [KEY=VALUE...]: the report in JSON_FILE (metrics, or a
# run record) is poor and names REASON (or one of REASON1|REASON2) for the module whose path
# ends in MODULE, for most of
# the samples the session took; each KEY of that reason is VALUE (python literals; KEY>VALUE,
# KEY<VALUE and KEY~VALUE1|VALUE2 too; "fine": the report is not poor). Prints the reason.
check_reason() {
	python3 - "$@" <<'EOP' || fail "$(cat "$1" | head -c 3000)"
import json, sys
doc = json.load(open(sys.argv[1]))
report = doc.get("stack_quality") or doc.get("profd", {}).get("stack_quality")
module, reason = sys.argv[2], sys.argv[3]
assert report, "no stack_quality report"
# "fine" among the conditions: stacks the report names a reason for that did not make them poor
assert report["poor"] is ("fine" not in sys.argv[4:]), "poor: %s" % report["poor"]
samples = report["samples"]
assert samples > 0, "no samples"
why = [r for m in report["modules"] if m["module"].endswith(module)
       for r in m["reasons"] if r["reason"] in reason.split("|")]
assert why, "no %s for %s" % (reason, module)
why = why[0]
# most of what the session took, however many samples the machine's load left it
assert why["samples"] * 2 > samples, "%s in %d of %d samples" % (reason, why["samples"], samples)
for cond in sys.argv[4:]:
    if cond == "fine":
        continue
    if ">" in cond:
        k, v = cond.split(">", 1)
        assert why[k] > json.loads(v), "%s=%r, not > %s" % (k, why[k], v)
    elif "<" in cond:
        k, v = cond.split("<", 1)
        assert why[k] < json.loads(v), "%s=%r, not < %s" % (k, why[k], v)
    elif "~" in cond:
        k, v = cond.split("~", 1)
        assert why[k] in v.split("|"), "%s=%r, not one of %s" % (k, why[k], v)
    else:
        k, v = cond.split("=", 1)
        assert why[k] == json.loads(v), "%s=%r, not %s" % (k, why[k], v)
print(json.dumps(why))
EOP
}

# session_of PID [N KEY TYPE VALUE...]: a finished 2 s session of PID at 199 Hz (kernel frames
# off: the report is of user stacks), its path
session_of() {
	local pid=$1 path n=1
	shift
	(($# > 0)) && n=$((1 + $# / 3))
	path=$(start_session "$pid" 199 2000000 "$n" kernel b false "$@")
	[[ $path == /org/profd/* ]] || fail "StartSession gave '$path'"
	[[ $(wait_finished "$path" 90) == completed ]] || fail "session failed: $(prop "$path" Error)"
	echo "$path"
}

# record_of PATH FILE: the session's run record into FILE
record_of() {
	bctl --json=short call $DEST $MGR_PATH $MGR GetRun s "$(prop "$1" RunId)" | python3 -c 'import json, sys
print(json.load(sys.stdin)["data"][0])' >"$2" || fail "no run record for $1"
}

mkdir -p "$T/bin"
objcopy --strip-all "$WORKLOAD_SPLIT" "$T/bin/workload-stripped"
build_id=$(readelf -n "$T/bin/workload-stripped" | awk '/Build ID:/ { print $3 }')
[[ $build_id =~ ^[0-9a-f]{40}$ ]] || fail "the stripped workload has no build-id: '$build_id'"
# its .dynsym lists only imports (no symbols), unless it exports functions (a sanitizer's
# runtime does): then what its symbols do not cover has no debug info
if readelf --dyn-syms -W "$T/bin/workload-stripped" |
	awk '$4 == "FUNC" && $7 != "UND" { found = 1 } END { exit !found }'; then
	naming=no-debug-info
else
	naming=no-symbols
fi

start_bus
unset DEBUGINFOD_URLS
start_profd

# --- a clean workload: fine, nothing printed
spawn_workload "$WORKLOAD_SPLIT" 120 1
clean=$SPAWNED
path=$(session_of $clean)
metrics "$path" >"$T/clean.json"
python3 - "$T/clean.json" <<'EOP' || fail "the clean workload's report: $(cat "$T/clean.json")"
import json, sys
report = json.load(open(sys.argv[1]))["stack_quality"]
assert report["samples"] > 0 and report["poor"] is False, "poor"
EOP
"$PROFCTL" --address="$BUS" record -p $clean -d 1 -F 199 --no-kernel -o "$T/clean.folded" \
	2>"$T/clean.err" || fail "profctl record failed: $(cat "$T/clean.err")"
! grep -q 'stack quality' "$T/clean.err" || fail "profctl printed a report for a clean workload: $(cat "$T/clean.err")"
kill $clean
ok "a clean workload: not poor ($(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["stack_quality"]
print("%d samples, %d ended early, %d with unnamed frames" % (r["samples"], r["ended_early"], r["with_unnamed_frames"]))' "$T/clean.json")), nothing printed"

# --- a stripped copy: no symbols (or no debug info), its build-id, and the hint asks for
# DEBUGINFOD_URLS
spawn "$T/bin/workload-stripped" 120 1
wait_until 30 runs_program "$SPAWNED" "$T/bin/workload-stripped" || fail "the stripped workload did not start"
stripped=$SPAWNED
path=$(session_of $stripped)
metrics "$path" >"$T/stripped.json"
why=$(check_reason "$T/stripped.json" /workload-stripped $naming debuginfod='"unset"')
[[ $why == *"$build_id"* && $why == *DEBUGINFOD_URLS* ]] || fail "the hint lacks the build-id or DEBUGINFOD_URLS: $why"
python3 - "$T/stripped.json" "$build_id" <<'EOP' || fail "the module's build-id: $(cat "$T/stripped.json")"
import json, sys
m = [m for m in json.load(open(sys.argv[1]))["stack_quality"]["modules"]
     if m["module"].endswith("/workload-stripped")][0]
assert m["build_id"] == sys.argv[2], m["build_id"]
EOP
record_of "$path" "$T/stripped.record"
check_reason "$T/stripped.record" /workload-stripped $naming >/dev/null
# still a keyhog-profile-v1 record: the strict reader takes the extra field
"$PROFCTL" run render "$T/stripped.record" >/dev/null || fail "the record with stack_quality does not validate"
ok "stripped: $(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["reason"])' "$why"), build-id $build_id, in the metrics and the run record"

"$PROFCTL" --address="$BUS" record -p $stripped -d 1 -F 199 --no-kernel -o "$T/stripped.folded" \
	2>"$T/stripped.err" || fail "profctl record failed: $(cat "$T/stripped.err")"
grep -q '^stack quality: ' "$T/stripped.err" && grep -q "workload-stripped: .*$naming: " "$T/stripped.err" ||
	fail "profctl record printed no naming reason: $(cat "$T/stripped.err")"
"$PROFCTL" --local record -p $stripped -d 1 -F 199 --no-kernel -f record -o "$T/local.record" \
	2>"$T/local.err" || fail "profctl --local record failed: $(cat "$T/local.err")"
"$PROFCTL" --local record -p $stripped -d 1 -F 199 --no-kernel -f metrics -o "$T/local.json" \
	2>/dev/null || fail "profctl --local record -f metrics failed"
grep -q "workload-stripped: .*$naming: " "$T/local.err" ||
	fail "profctl --local record printed no naming reason: $(cat "$T/local.err")"
check_reason "$T/local.record" /workload-stripped $naming >/dev/null
check_reason "$T/local.json" /workload-stripped $naming >/dev/null
kill $stripped
ok "profctl record prints the block through profd and with --local (metrics and record too)"

# --- a stack copy too small: 40 frames of 512 bytes in a 4 KiB copy
spawn "$WORKLOAD_DEEP_STACK" 120 40
wait_until 30 runs_program "$SPAWNED" "$WORKLOAD_DEEP_STACK" || fail "deep-stack did not start"
deep=$SPAWNED
path=$(session_of $deep stack_bytes u 4096)
metrics "$path" >"$T/deep.json"
why=$(check_reason "$T/deep.json" /deep-stack stack-copy 'stack_bytes>4096')
kill $deep
ok "a 4096-byte copy: stack-copy, --stack-bytes $(python3 -c 'import json, sys
print(json.loads(sys.argv[1])["stack_bytes"])' "$why")"

# ... the same with frame pointers: the kernel's callchain finishes the stacks (not poor), and
# tells the copy that would have held them: 40 frames of 512 bytes, within the largest copy
spawn "$WORKLOAD_DEEP_STACK_FP" 120 40
wait_until 30 runs_program "$SPAWNED" "$WORKLOAD_DEEP_STACK_FP" || fail "deep-stack-fp did not start"
deep=$SPAWNED
path=$(session_of $deep stack_bytes u 4096)
metrics "$path" >"$T/deep-fp.json"
why=$(check_reason "$T/deep-fp.json" /deep-stack-fp stack-copy fine stack_bytes_known=true \
	'stack_bytes>20479' 'stack_bytes<65529')
kill $deep
ok "with frame pointers: stack-copy, --stack-bytes $(python3 -c 'import json, sys
print(json.loads(sys.argv[1])["stack_bytes"])' "$why") would have held the stacks"

# --- JIT code whose perf map is gone (removed once written)
spawn "$WORKLOAD_JIT" 120
wait_until 30 runs_program "$SPAWNED" "$WORKLOAD_JIT" || fail "workload-jit did not start"
jit=$SPAWNED
wait_until 30 test -s /tmp/perf-$jit.map || fail "workload-jit wrote no perf map"
rm /tmp/perf-$jit.map
path=$(session_of $jit)
metrics "$path" >"$T/jit.json"
why=$(check_reason "$T/jit.json" '[anonymous code]' jit-without-map)
[[ $why == *perf-PID.map* ]] || fail "the JIT hint names no perf map: $why"
kill $jit
ok "JIT whose perf map was removed: jit-without-map"

# --- code without CFI: the walk stops in it
spawn "$WORKLOAD_NOCFI" 120
wait_until 30 runs_program "$SPAWNED" "$WORKLOAD_NOCFI" || fail "workload-nocfi did not start"
nocfi=$SPAWNED
path=$(session_of $nocfi)
metrics "$path" >"$T/nocfi.json"
why=$(check_reason "$T/nocfi.json" /workload-nocfi no-cfi)
[[ $why == *-fasynchronous-unwind-tables* ]] || fail "the no-cfi hint names no fix: $why"
kill $nocfi
ok "code without CFI: no-cfi"

# --- many processes (a cgroup): one report merged over them. The stripped copy and a clean
# workload side by side, as uid 65534 in its own cgroup; the cgroup profiled by uid 65534
# (its sandboxed unwinder), by root and with --local. The stripped module is named with its
# reason for the samples of its process (its share of the two processes' CPU time over the
# session), the clean one for none, and no sample is counted twice.
mkdir -p "$T/many"
chown $NOBODY "$T/many"
own=/user.slice/user-$NOBODY.slice/user@$NOBODY.service/profd-quality-$$
make_cgroup /user.slice/user-$NOBODY.slice/user@$NOBODY.service $NOBODY
make_cgroup $own $NOBODY
spawn_in $own "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 120 1
clean=$SPAWNED
spawn "${IN_CGROUP[@]}" "$mount$own" "${AS_NOBODY[@]}" "$T/bin/workload-stripped" 120 1
wait_until 30 runs_program "$SPAWNED" "$T/bin/workload-stripped" || fail "the stripped workload did not start"
stripped=$SPAWNED

# cpu_ticks PID: its user and system time so far
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# check_many NAME [AS...] -- PROFCTL-OPTIONS...: a 2 s record of the cgroup's metrics into
# $T/many/NAME.json (with BACKEND, by that backend), and its report checked against what
# each process ran meanwhile
check_many() {
	local name=$1 as=() s0 c0 s1 c1
	shift
	while [[ $1 != -- ]]; do as+=("$1"); shift; done
	shift
	s0=$(cpu_ticks $stripped) c0=$(cpu_ticks $clean)
	"${as[@]}" "$PROFCTL" "$@" record --cgroup="$mount$own" -d 2 -F 199 --no-kernel ${BACKEND:+--backend "$BACKEND"} -f metrics \
		-o "$T/many/$name.json" 2>"$T/many/$name.err" || fail "$name: profctl record failed: $(cat "$T/many/$name.err")"
	s1=$(cpu_ticks $stripped) c1=$(cpu_ticks $clean)
	python3 - "$T/many/$name.json" $((s1 - s0)) $((c1 - c0)) "$naming" "$build_id" <<'EOP' ||
import json, sys
doc = json.load(open(sys.argv[1]))
report = doc["stack_quality"]
ran_stripped, ran_clean, naming, build_id = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
samples = report["samples"]
assert ran_stripped > 0 and ran_clean > 0, "the workloads did not run: %d %d" % (ran_stripped, ran_clean)
assert samples > 0 and report["poor"], "not poor, %d samples" % samples
# once each: a sample is counted for its own process's resolver, not for every resolver
assert samples <= doc["samples_captured"], "%d samples of %d captured" % (samples, doc["samples_captured"])
assert report["with_unnamed_frames"] <= samples
mods = {m["module"].rsplit("/", 1)[-1]: m for m in report["modules"]}
m = mods.get("workload-stripped")
assert m, "no workload-stripped in %s" % list(mods)
assert m["build_id"] == build_id, m["build_id"]
why = [r for r in m["reasons"] if r["reason"] in naming.split("|")]
assert why, "no %s for workload-stripped: %s" % (naming, m["reasons"])
share = ran_stripped / (ran_stripped + ran_clean)
# its process's samples, give or take the sampling's luck and the record's start-up
assert why[0]["samples"] * 2 > share * samples, "%s in %d of %d samples, its process ran %.0f%%" % (
    naming, why[0]["samples"], samples, 100 * share)
c = mods.get("workload-split")
weight = c["samples_ended_here"] + c["samples_unnamed_here"] if c else 0
assert weight * 20 <= samples, "the clean workload is reported: %s" % c
print("%d samples, %s in %d (its process ran %.0f%%), the clean workload fine" % (
    samples, naming, why[0]["samples"], 100 * share))
EOP
		fail "$name: $(head -c 3000 "$T/many/$name.json")"
}
got=$(check_many nobody "${AS_NOBODY[@]}" -- --address="$BUS")
ok "a cgroup, uid $NOBODY's unwinder: $got"
got=$(check_many root -- --address="$BUS")
ok "a cgroup, root's session: $got"
got=$(check_many local -- --local)
ok "a cgroup, --local: $got"
# the bpf backend's kernel frame-pointer stacks are named by the unwinder (in profd's
# session) or in-process (--local) as weighted samples: its report too. Its resolvers see
# each process's mappings per bucket, not one address space, so the module's symbol table
# is not looked at: a stripped module is "no-debug-info" there
naming_seen=$naming
naming="no-symbols|no-debug-info"
got=$(BACKEND=bpf check_many bpf -- --address="$BUS")
ok "a cgroup, root's bpf session: $got"
got=$(BACKEND=bpf check_many bpf-local -- --local)
ok "a cgroup, --local bpf: $got"
naming=$naming_seen
kill $clean $stripped

# --- DEBUGINFOD_URLS set (a server that refuses): the hint says what became of the fetch
stop_profd
DEBUGINFOD_URLS=http://127.0.0.1:9 start_profd
spawn "$T/bin/workload-stripped" 120 1
wait_until 30 runs_program "$SPAWNED" "$T/bin/workload-stripped" || fail "the stripped workload did not start"
path=$(session_of $SPAWNED)
metrics "$path" >"$T/fetch.json"
why=$(check_reason "$T/fetch.json" /workload-stripped $naming 'debuginfod~pending|failed')
[[ $why != *"set DEBUGINFOD_URLS"* ]] || fail "the hint asks to set DEBUGINFOD_URLS, which is set: $why"
ok "with DEBUGINFOD_URLS: $(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["hint"])' "$why")"

# --- a forged report: uid 65534's session fails with why, uid 2's beside it completes
stop_profd
mkdir -p "$T/rogue"
cp "$PROFD" "$T/rogue/profd"
cp "$(dirname "$PROFD")/profd-unwinder" "$T/rogue/profd-unwinder.real"
cp "$ROGUE_UNWINDER" "$T/rogue/profd-unwinder"
PROFD=$T/rogue/profd
start_profd
spawn_workload "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 120 1
nobody_pid=$SPAWNED
spawn_workload "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 120 1
other_pid=$SPAWNED
forged=$(session_as "${AS_NOBODY[@]}" -- $nobody_pid 199 2000000)
honest=$(session_as "${AS_OTHER[@]}" -- $other_pid 199 2000000)
[[ $(wait_finished "$forged" 60) == failed ]] || fail "the session with a forged report did not fail"
[[ $(prop "$forged" Error) == *"stack-quality report that cannot be true"* ]] ||
	fail "the forged report's session failed for another reason: $(prop "$forged" Error)"
[[ $(wait_finished "$honest" 60) == completed ]] ||
	fail "uid $OTHER's session failed beside a forged report: $(prop "$honest" Error)"
as_other busctl --address="$BUS" --json=short call $DEST "$honest" $SES GetMetrics | python3 -c 'import json, sys
report = json.loads(json.load(sys.stdin)["data"][0])["stack_quality"]
assert report["samples"] > 0, report' || fail "uid $OTHER's session has no report"
ok "a forged report fails uid $NOBODY's session ($(prop "$forged" Error)); uid $OTHER's completes with its report"
