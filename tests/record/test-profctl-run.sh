#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profctl run render: fixtures render byte-identically, bad files fail with
# exit 1 and a message naming the file and the field, usage errors exit 2.
# Usage: test-profctl-run.sh PROFCTL FIXTURES_DIR
set -u
profctl=$1
fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect STATUS STDERR-SUBSTRING ARGS...: run profctl, check exit status and stderr
expect() {
	local want=$1 message=$2 status
	shift 2
	"$profctl" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[[ $status == "$want" ]] || fail "profctl $*: exit $status, expected $want; stderr: $(cat "$tmp/err")"
	grep -qF -- "$message" "$tmp/err" || fail "profctl $*: stderr lacks '$message': $(cat "$tmp/err")"
}

for name in full sparse live valid-no-states valid-optional-missing valid-extra-fields; do
	"$profctl" run render "$fixtures/valid/$name.json" >"$tmp/out" 2>"$tmp/err" ||
		fail "render $name: exit $?: $(cat "$tmp/err")"
	cmp -s "$tmp/out" "$fixtures/valid/$name.txt" ||
		fail "render $name: text differs: $(diff "$tmp/out" "$fixtures/valid/$name.txt" | head -5)"
	"$profctl" run render --text "$fixtures/valid/$name.json" | cmp -s - "$fixtures/valid/$name.txt" ||
		fail "render --text $name differs"
done

for name in full sparse live valid-extra-fields; do
	"$profctl" run render "$fixtures/valid/$name.json" --json >"$tmp/out" ||
		fail "render --json $name: exit $?"
	cmp -s "$tmp/out" "$fixtures/valid/$name.json" || fail "render --json $name is not the fixture"
	"$profctl" --json run render "$fixtures/valid/$name.json" | cmp -s - "$fixtures/valid/$name.json" ||
		fail "global --json render $name is not the fixture"
done

# the normalised JSON renders like the original, and from stdin
"$profctl" run render --json "$fixtures/valid/valid-no-states.json" >"$tmp/normal.json"
grep -q '"states": \[\]' "$tmp/normal.json" || fail "absent states not normalised to []"
"$profctl" run render - <"$tmp/normal.json" | cmp -s - "$fixtures/valid/valid-no-states.txt" ||
	fail "normalised record renders differently"
"$profctl" run render "$fixtures/edge/edge-u64-max.json" --json | grep -q '"wall_time_ns": 18446744073709551615,' ||
	fail "u64::MAX not kept by render --json"

declare -A paths=(
	[invalid-cache-state]='identity.cache_state: unknown variant "hot"'
	[invalid-float-for-integer]='input_bytes: invalid type: floating point 1.5'
	[invalid-foreign-schema]='schema: unsupported schema "keyhog-profile-v2"'
	[invalid-missing-resources]='resources: missing field'
	[invalid-missing-run-id]='identity.run_id: missing field'
	[invalid-negative]='transitions[1].elapsed_ns: invalid value: integer -5'
	[invalid-not-object]='document: invalid type: array, expected an object'
	[invalid-stages-not-array]='stages: invalid type: object, expected an array'
	[invalid-status-case]='status: unknown variant "Completed"'
	[invalid-string-for-integer]='identity.scanner_threads: invalid type: string "8"'
	[invalid-truncated]='document: invalid JSON at line 28'
	[invalid-u64-overflow]='wall_time_ns: invalid value: integer 18446744073709551616 is out of range'
	[invalid-unknown-stage]='stages[0].stage: unknown variant "phase3-magic"'
)
for name in "${!paths[@]}"; do
	file=$fixtures/invalid/$name.json
	expect 1 "profctl: invalid record '$file': ${paths[$name]}" run render "$file"
	[[ -s $tmp/out ]] && fail "render $name printed something on stdout"
done

: >"$tmp/empty.json"
head -c 4096 "$profctl" >"$tmp/binary"
printf '{"schema": "keyhog-profile-v1"' >"$tmp/cut.json"
expect 1 "profctl: cannot read record '$tmp/missing.json': No such file or directory" run render "$tmp/missing.json"
expect 1 "profctl: cannot read record '$tmp': Is a directory" run render "$tmp"
expect 1 "profctl: invalid record '$tmp/empty.json': the file is empty" run render "$tmp/empty.json"
expect 1 "profctl: invalid record '$tmp/binary': binary data, not JSON" run render "$tmp/binary"
expect 1 "profctl: invalid record '$tmp/cut.json': document: invalid JSON" run render "$tmp/cut.json"

expect 2 "takes exactly one FILE" run render
expect 2 "takes exactly one FILE" run render a b
expect 2 "unknown option '--bogus'" run render --bogus "$fixtures/valid/full.json"
expect 2 "exclude each other" run render --text --json "$fixtures/valid/full.json"
expect 2 "unknown run sub-verb 'frob'" run frob
expect 2 "Usage: profctl run SUBVERB" run
"$profctl" run --help | grep -q render || fail "run --help lacks render"
"$profctl" run render --help | grep -q -- --json || fail "run render --help lacks --json"

if ((failures > 0)); then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "profctl run render: all checks passed"
