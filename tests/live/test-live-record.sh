#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profctl record --stages -- CMD: a command built with libprofd-live runs as a live
# run (profctl tells it where profd is); the outputs are its session's exports, and
# the Firefox export opens in the Firefox Profiler's importer with each stage span
# listed as an interval marker on its thread.
source "$(dirname "$0")/../daemon/lib.sh"
: "${WORKLOAD_SCANNER:?}" "${PROFCTL:?}" "${NODE_MODULES:?}"

start_bus
start_profd
mkdir -m 777 "$T/out"
# 60 chunks: about 240 samples, 24 expected in each one-unit stage (test-stage-shares.c)
as_nobody "$PROFCTL" --address="$BUS" record --stages -F 199 -o "$T/out/run.json" -o "$T/out/run.folded" -o "$T/out/run.pb.gz" \
	-- "$WORKLOAD_SCANNER" --chunks 60 >"$T/scanner" 2>"$T/profctl.err" ||
	fail "profctl record --stages: $(cat "$T/profctl.err")"
grep -q '^finish stored$' "$T/scanner" || fail "the command's run was not stored: $(cat "$T/scanner")"
grep -q 'decode_hot' "$T/out/run.folded" || fail "the folded output has no decode_hot: $(head -5 "$T/out/run.folded")"
ok "profctl record --stages: the command's run is live and its outputs are written"

# profctl run show: the record's own text, then profd's share and hottest function per stage
ID=$(awk '$1 == "live" { print $2 }' "$T/scanner")
as_nobody "$PROFCTL" --address="$BUS" run show "$ID" >"$T/show" || fail "profctl run show $ID"
grep -q '^sampled by profd: session [0-9a-f]*, ended finished' "$T/show" || fail "run show: $(cat "$T/show")"
for stage in source-read:read_hot decode:decode_hot phase2-keyword-ac:scan_hot reporting:report_hot; do
	grep -qE "^  stage ${stage%%:*} +cpu_share= *[0-9.]+% samples=[1-9][0-9]* hottest: ${stage#*:} " "$T/show" ||
		fail "run show lacks stage ${stage%%:*} led by ${stage#*:}: $(grep '^  stage' "$T/show")"
done
grep -qE '^  state scanning +cpu_share=' "$T/show" || fail "run show lacks the scanning state: $(cat "$T/show")"
ok "profctl run show: per-stage and per-state shares and hottest functions"

NODE_MODULES=$NODE_MODULES node "$(dirname "$0")/check-stage-markers.mjs" "$T/out/run.json" \
	source-read decode phase2-keyword-ac reporting || fail "the stage markers of the Firefox export"
ok "the Firefox export opens in profiler-cli with the stage markers listed on each thread"

# pprof: each sample carries its stage as a label, so -tagfocus picks one stage's samples
mkdir -p "$T/home"
for stage in decode:decode_hot phase2-keyword-ac:scan_hot; do
	HOME=$T/home go tool pprof -top -tagfocus="stage=${stage%%:*}" "$T/out/run.pb.gz" >"$T/top" 2>&1 ||
		fail "go tool pprof -tagfocus stage=${stage%%:*}: $(tail -3 "$T/top")"
	# the first function row is the stage's hot function, with >= 90% of the focused samples
	awk -v fn="${stage#*:}" '
		/^Showing nodes accounting for/ { shown = $6 + 0 }
		header && !row { row = 1; ok = $NF == fn && shown > 0 && $2 + 0 >= 0.9 * shown }
		/ flat +flat%/ { header = 1 }
		END { exit !ok }' "$T/top" ||
		fail "pprof -tagfocus stage=${stage%%:*} is not led by ${stage#*:}: $(head -12 "$T/top")"
done
ok "pprof: -tagfocus stage=NAME gives that stage's samples, led by its hot function"

# without --stages an instrumented command is sampled like any other and runs as before
as_nobody "$PROFCTL" --address="$BUS" record -F 199 -o "$T/out/plain.folded" -- "$WORKLOAD_SCANNER" --chunks 40 \
	>"$T/plain" 2>"$T/plain.err" || fail "profctl record without --stages: $(cat "$T/plain.err")"
grep -q '^not-live not asked for' "$T/plain" && grep -q '^finish local$' "$T/plain" ||
	fail "the scanner under profctl record without --stages: $(cat "$T/plain")"
grep -q 'scan_hot' "$T/out/plain.folded" || fail "the plain record's folded stacks: $(head -3 "$T/out/plain.folded")"
ok "profctl record without --stages: the instrumented command runs as before and is sampled"

# without profd's bus the command runs as before: not live, no error
PROFD_LIVE=unix:path=$T/no-such-bus as_nobody "$WORKLOAD_SCANNER" --chunks 2 >"$T/offline" ||
	fail "the scanner without profd failed: $(cat "$T/offline")"
grep -q '^not-live profd refused\|^not-live cannot connect' "$T/offline" && grep -q '^finish local$' "$T/offline" ||
	fail "the scanner without profd: $(cat "$T/offline")"
ok "an instrumented program without profd: $(head -1 "$T/offline")"
