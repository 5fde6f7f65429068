#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Adaptive stack copy (#14): the first session of a program copies the whole
# stack_bytes and its unwinder reports what the walks needed; profd keeps that
# per (caller, executable) in state/stack-sizes, and the program's next session
# copies that much, with the same stacks. A deeper stack on the same binary
# runs out of the smaller copy and the size grows back. It survives a restart;
# a lower stack_bytes is still the ceiling. After an exec (profctl record -- CMD)
# the size is learned for the program exec'd.
source "$(dirname "$0")/lib.sh"
: "${WORKLOAD_DEEP_STACK:?}"

# profile DEPTH [OPTIONS...]: a session of a fresh deep-stack recursing DEPTH frames of 512
# bytes, ended by its sample budget (300, whatever the machine's load); its path
profile() {
	local depth=$1 path
	shift
	spawn "$WORKLOAD_DEEP_STACK" 600 "$depth"
	wait_until 30 runs_program "$SPAWNED" "$WORKLOAD_DEEP_STACK" || fail "deep-stack did not start"
	path=$(start_session "$SPAWNED" 999 60000000 $((1 + $# / 3)) kernel b false "$@")
	[[ $path == /org/profd/* ]] || fail "StartSession gave '$path'"
	[[ $(wait_finished "$path" 90) == completed ]] || fail "session failed: $(prop "$path" Error)"
	kill "$SPAWNED"
	echo "$path"
}

# metric PATH KEY: a value of the session's metrics
metric() {
	bctl --json=short call $DEST "$1" $SES GetMetrics |
		python3 -c 'import json, sys; print(json.loads(json.load(sys.stdin)["data"][0])[sys.argv[1]])' "$2"
}

# hottest PATH: the stack with the most samples (folded, without its count)
hottest() {
	"$EXPORT_TO_FD" "$BUS" "$1" folded "$T/hottest.folded" || fail "cannot export $1"
	sort -t' ' -k2 -n -r "$T/hottest.folded" | head -n 1 | sed 's/ [0-9]*$//'
}

start_bus
start_profd

budget=(ring_capacity t 300)
first=$(profile 3 "${budget[@]}")
copied=$(metric "$first" stack_bytes)
needed=$(metric "$first" stack_bytes_needed)
((copied == 16384)) || fail "the first session copied $copied bytes, not the default 16384"
((needed >= 2048 && needed < 16384)) ||
	fail "4 frames of 512 bytes needed $needed bytes of the 16384 copied"
ok "first session: copied $copied bytes, the walks needed $needed"

second=$(profile 3 "${budget[@]}")
((${second_copied:=$(metric "$second" stack_bytes)} == needed)) ||
	fail "the second session copied $second_copied bytes, not the $needed learned"
(($(metric "$second" requested_stack_bytes) == 0)) || fail "the request is not reported as given"
truncated=$(metric "$second" truncated_stacks)
samples=$(metric "$second" samples_captured)
((truncated * 100 <= samples)) || fail "$truncated of $samples stacks truncated with the learned copy"
a=$(hottest "$first")
b=$(hottest "$second")
[[ $a == "$b" && $a == *descend\;descend\;descend\;descend\;deep_leaf* ]] ||
	fail "the hottest stacks differ: '$a' with 16384 bytes, '$b' with $needed"
ok "second session: copied $second_copied bytes, the same hottest stack ($a)"

# kept across a restart; the caller's stack_bytes stays the ceiling
stop_profd
learned=$(awk 'NR == 2 { print $7 }' "$T/state/stack-sizes")
((learned >= 2048 && learned < 16384)) || fail "state/stack-sizes: $(cat "$T/state/stack-sizes")"
start_profd
after=$(profile 3 "${budget[@]}" stack_bytes u 2048)
(($(metric "$after" stack_bytes) == 2048 && $(metric "$after" requested_stack_bytes) == 2048)) ||
	fail "stack_bytes 2048 copied $(metric "$after" stack_bytes) bytes"
restarted=$(profile 3 "${budget[@]}")
(($(metric "$restarted" stack_bytes) == learned)) ||
	fail "after a restart the session copied $(metric "$restarted" stack_bytes) bytes, not $learned"
ok "after a restart: $learned bytes; a request of 2048 copies 2048"

# 100 frames of 512 bytes: most walks run out of the learned copy, which doubles
deep=$(profile 100 "${budget[@]}")
((${deep_copied:=$(metric "$deep" stack_bytes)} == learned)) ||
	fail "the deep session copied $deep_copied bytes, not the $learned learned"
(($(metric "$deep" truncated_stacks) > 0)) || fail "no truncated stack with $deep_copied bytes"
grown=$(profile 100 "${budget[@]}")
((${grown_copied:=$(metric "$grown" stack_bytes)} > deep_copied)) ||
	fail "after truncated stacks the copy is still $grown_copied bytes"
ok "a deeper stack grows it back: $deep_copied -> $grown_copied bytes"

# profctl record -- CMD: the session starts on profctl's child held right after its exec of
# CMD; what is learned is CMD's (a copy of deep-stack: a program never seen), never profctl's
cp "$WORKLOAD_DEEP_STACK" "$T/deep-copy"
spawn "$PROFCTL" --address="$BUS" record -d 4 -F 999 --no-kernel -o "$T/exec.json" -f metrics -- \
	"$T/deep-copy" 600 3
wait_until 120 test -s "$T/exec.json" || fail "profctl record -- CMD wrote nothing"
copy_entry=$(stat -c '%i' "$T/deep-copy")
profctl_entry=$(stat -L -c '%i' "$PROFCTL")
awk -v i="$copy_entry" '$3 == i { found = 1 } END { exit !found }' "$T/state/stack-sizes" ||
	fail "nothing learned for the exec'd command: $(cat "$T/state/stack-sizes")"
! awk -v i="$profctl_entry" '$3 == i { found = 1 } END { exit !found }' "$T/state/stack-sizes" ||
	fail "profctl's own executable learned a stack size"
pkill -KILL -P "$SPAWNED" || true
ok "record -- CMD: learned for the exec'd command, not for profctl"

# and the command's next record copies what was learned for it: held after its exec, the
# child's executable is CMD's when the session starts
learned_cmd=$(awk -v i="$copy_entry" '$3 == i { print $7 }' "$T/state/stack-sizes")
"$PROFCTL" --address="$BUS" record -d 4 -F 999 --no-kernel -o "$T/exec2.json" -f metrics -- \
	"$T/deep-copy" 1 3 || fail "the second profctl record -- CMD failed"
cmd_copied=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["stack_bytes"])' \
	"$T/exec2.json")
((cmd_copied == learned_cmd)) ||
	fail "the command's second record copied $cmd_copied bytes, not the $learned_cmd learned"
ok "record -- CMD again: copies the $learned_cmd bytes learned for the command"
