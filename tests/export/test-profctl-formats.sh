#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `profctl --local record -o FILE` writes each export format, picked from the
# file name (or from -f), and each file opens in its reader: folded lines parse,
# go tool pprof reads the .pb.gz, the JSON files carry their format's marks, the
# SVG is well-formed.
# Usage: test-profctl-formats.sh PROFCTL WORKLOAD_SPLIT
set -u
source "$(dirname "$0")/../test-util.sh"
profctl=$1 workload=$2
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

"$workload" 60 2 & # outlives the test however slow a loaded machine makes it
pid=$!
wait_until 30 runs_program $pid "$workload" 2 || fail "the workload did not start"

record() { # NAME [ARGS...]
	local name=$1
	shift
	if ! "$profctl" --local record -p "$pid" -d 1 -F 199 -o "$dir/$name" "$@" >"$dir/$name.out" 2>"$dir/$name.err"; then
		fail "profctl record -o $name $*: $(tail -1 "$dir/$name.err")"
		return 1
	fi
	[ -s "$dir/$name" ] || { fail "$name is empty"; return 1; }
}

if record profile.folded; then
	grep -qv '^[^ ]\+\( [^ ]\+\)* [0-9]\+$' "$dir/profile.folded" &&
		fail "profile.folded has lines that are not 'stack COUNT': $(grep -v ' [0-9]\+$' "$dir/profile.folded" | head -2)"
	grep -q 'split_heavy\|workload-split' "$dir/profile.folded" || fail "profile.folded has no frame of the workload"
fi
if record profile.pb.gz; then
	HOME=$dir go tool pprof -raw -symbolize=none "$dir/profile.pb.gz" >"$dir/raw.txt" 2>&1 ||
		fail "go tool pprof cannot read profile.pb.gz: $(tail -2 "$dir/raw.txt")"
	grep -q 'split_heavy\|workload-split' "$dir/raw.txt" || fail "pprof sees no frame of the workload"
fi
if record profile.json; then
	node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1]));
		if (p.meta.version !== 36 || !p.threads.length) process.exit(1);' "$dir/profile.json" ||
		fail "profile.json is not a Gecko profile with threads"
fi
if record profile.speedscope.json; then
	grep -q '"\$schema":"https://www.speedscope.app/file-format-schema.json"' "$dir/profile.speedscope.json" ||
		fail "profile.speedscope.json lacks the speedscope \$schema"
fi
if record flame.svg; then
	xmllint --noout "$dir/flame.svg" || fail "flame.svg is not well-formed"
fi
# -f wins over a name that says nothing
if record capture.data -f folded; then
	grep -q ' [0-9]\+$' "$dir/capture.data" || fail "-f folded did not write folded stacks"
fi

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }
echo ok
