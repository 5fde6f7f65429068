#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-live-record.py RECORD SCANNER_OUTPUT [MIN_SAMPLES]: the stored record of a
# workload-scanner live run (GetRun's answer, busctl --json=short) against what the
# scanner measured itself ("cpu STAGE NANOS" lines): each stage's samples are
# its own hot function's (>= 90%), and the stages' shares of the staged samples
# are their shares of the threads' CPU time within 5 points.
import json
import re
import sys

HOT = {
    "source-read": "read_hot",
    "decode": "decode_hot",
    "phase2-keyword-ac": "scan_hot",
    "reporting": "report_hot",
}

failed = False


def fail(msg):
    global failed
    failed = True
    print(f"FAIL: {msg}", file=sys.stderr)


doc = json.load(open(sys.argv[1]))
record = json.loads(doc["data"][0])
cpu = {}
for line in open(sys.argv[2]):
    w = line.split()
    if len(w) == 3 and w[0] == "cpu":
        cpu[w[1]] = int(w[2])
min_samples = int(sys.argv[3]) if len(sys.argv) > 3 else 400
if set(cpu) != set(HOT):
    sys.exit(f"FAIL: the scanner printed CPU times of {sorted(cpu)}")

if record["status"] != "completed":
    fail(f"status {record['status']}")
profd = record.get("profd")
if not profd:
    sys.exit("FAIL: the record has no profd field")
if profd["end_reason"] != "finished":
    fail(f"end_reason {profd['end_reason']}")
spans = profd["spans"]
if spans["lost"] or spans["invalid"] or spans["ring_errors"] or spans["over_limit"]:
    fail(f"spans were lost or refused: {spans}")
if spans["threads"] < 2:
    fail(f"{spans['threads']} threads wrote spans, the scanner runs 2")
ident = record["identity"].get("profd")
if not ident or not ident.get("comm", "").startswith("workload-scan") or \
        not re.fullmatch(r"[0-9a-f]{16,}", ident.get("build_id") or ""):
    fail(f"identity.profd {ident}")

stages = {s["stage"]: s for s in record["stages"]}
if set(stages) != set(HOT):
    fail(f"stages {sorted(stages)}")
staged = sum(stages[s]["profd"]["samples"] for s in HOT if s in stages)
if staged < min_samples:
    sys.exit(f"FAIL: {staged} samples in the stages, fewer than {min_samples}: too few to compare shares")
unstaged = profd["unstaged"]["samples"]
if unstaged > 0.05 * profd["samples"]:
    fail(f"{unstaged} of {profd['samples']} samples in no stage")
cpu_all = sum(cpu.values())
for stage, fn in HOT.items():
    p = stages[stage]["profd"]
    hottest = p["hottest"]
    top = hottest[0] if hottest else {"function": None, "samples": 0}
    own = top["samples"] / p["samples"] if p["samples"] else 0
    if top["function"] != fn or own < 0.9:
        fail(f"stage {stage}: hottest {top['function']} in {own:.1%} of its {p['samples']} samples, want {fn} in >= 90%")
    share = p["samples"] / staged
    want = cpu[stage] / cpu_all
    wall = stages[stage]["elapsed_ns"] / sum(stages[s]["elapsed_ns"] for s in HOT)
    print(f"{stage}: {p['samples']} samples, share {share:.3f}, CPU share {want:.3f}, "
          f"wall share {wall:.3f}, {fn} {own:.1%}")
    if abs(share - want) > 0.05:
        fail(f"stage {stage}: sample share {share:.3f}, CPU time share {want:.3f}: more than 5 points apart")
states = {s["state"]: s for s in profd["states"]}
if "scanning" not in states or states["scanning"]["samples"] < 0.9 * profd["samples"]:
    fail(f"the scanning state has {states.get('scanning', {}).get('samples')} of {profd['samples']} samples")
sys.exit(1 if failed else 0)
