#!/usr/bin/env bash
# profctl's error paths: each a clear one-line message and the documented exit status.
set -u
profctl=$1
failed=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

check() { # description, expected status, expected stderr fragment, command...
	local what=$1 want_status=$2 want_text=$3 status
	shift 3
	"$@" >"$dir/out" 2>"$dir/err"
	status=$?
	if [ "$status" -ne "$want_status" ] || ! grep -qF -- "$want_text" "$dir/err"; then
		echo "FAIL: $what: status $status (want $want_status), stderr: $(cat "$dir/err")"
		failed=1
	fi
}

nobus="--address=unix:path=$dir/no-such-bus"
check "no daemon" 1 "cannot reach profd on unix:path=$dir/no-such-bus" "$profctl" "$nobus" sessions
check "no daemon hint" 1 "or use --local" "$profctl" "$nobus" runs
check "unknown verb" 2 "unknown verb 'frobnicate'" "$profctl" frobnicate
check "no verb" 2 "Usage: profctl" "$profctl"
check "unknown global option" 2 "unrecognized option" "$profctl" --frobnicate sessions
check "bad session id" 2 "invalid session id 'a/b'" "$profctl" "$nobus" status a/b
check "status without id" 2 "Usage: profctl status ID" "$profctl" "$nobus" status
check "export without format" 2 "Usage: profctl export ID -f FORMAT" "$profctl" "$nobus" export abc
check "sessions with extra argument" 2 "Usage: profctl sessions" "$profctl" sessions extra

"$profctl" --help | grep -q "^  sessions" || { echo "FAIL: --help does not list verbs"; failed=1; }
"$profctl" --version | grep -q "^profctl " || { echo "FAIL: --version"; failed=1; }
exit $failed
