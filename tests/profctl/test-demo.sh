#!/usr/bin/env bash
# The README's main command does what the README says: a flame graph, a pprof
# file that go tool pprof reads, and the run record's text, through profd.
set -u
demo=$1
export PROFD_DEMO_BUILD=$2
out=$("$demo" 2>&1)
status=$?
fail() { echo "FAIL: $*"; echo "--- demo output:"; echo "$out"; exit 1; }
[ $status -eq 0 ] || fail "tools/demo exited with $status"
d=$PROFD_DEMO_BUILD/demo
xmllint --noout "$d/flamegraph.svg" || fail "the flame graph is not well-formed"
grep -q "split_heavy" "$d/flamegraph.svg" || fail "the flame graph lacks split_heavy"
gzip -t "$d/profile.pb.gz" || fail "the pprof file is not gzip"
grep -qE "^ *[0-9.]+m?s +[0-9.]+% .*(split_(heavy|light)|workload_mix)" <<<"$out" || fail "go tool pprof -top lacks the workload's functions"
grep -q "^KeyHog profile " <<<"$out" || fail "no run record text"
grep -q "state=completed source=pid workload=workload-split" <<<"$out" || fail "the run record is not the workload's"
grep -q "Files in $d" <<<"$out" || fail "the demo does not say where the files are"
echo "ok - tools/demo"
