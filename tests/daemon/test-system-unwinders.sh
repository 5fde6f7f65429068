#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Root's whole-machine sessions (perf-fp, bpf) while another user's unwinders
# are killed again and again, each soon after its start (its session goes on
# with a new one): profd's unwinders are profd's, not the machine's, and stay
# out of the profile, the live ones and those gone before their samples were
# read (records are read after the fact, bpf's buckets only at the end) alike.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

[[ $(id -u) == 0 ]] || { echo "SKIP: whole-machine sessions are root's"; exit 77; }

start_bus
start_profd
spawn_workload 2 "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 600 2
target=$SPAWNED

# crash_unwinders SECONDS: for about SECONDS, sessions of uid OTHER at 999 Hz, each of whose
# unwinders is killed (SIGKILL) as soon as profd says it started, while it reads its first
# files: the session goes on with a new one, killed in turn, until it fails (the fourth
# death). Their short lives fall between two reads of the machine's rings: their records are
# read once they are gone. Prints how many were killed.
crash_unwinders() {
	local end=$((SECONDS + $1)) n=0 s u=
	while ((SECONDS < end)); do
		s=$(session_as "${AS_OTHER[@]}" -- "$target" 999 20000000)
		[[ -n $s ]] || fail "uid $OTHER's session did not start"
		for _ in 1 2 3 4; do
			wait_until 30 newer_unwinder $OTHER "$u" || fail "no new unwinder for uid $OTHER"
			u=$(unwinder_pid $OTHER)
			kill -KILL "$u" && n=$((n + 1))
		done
		[[ $(wait_finished "$s" 60) == failed ]] ||
			fail "uid $OTHER's session went on after its unwinder died 4 times"
	done
	echo $n
}

# unwinder_samples FOLDED: the samples of this profd's unwinders (the first frame of a folded
# line is the process's comm-pid; other profds on the machine are the machine's)
unwinder_samples() {
	grep -o 'started the unwinder of uid [0-9]* (pid [0-9]*)' "$T/profd.log" |
		awk '{ print "profd-unwinder-" substr($NF, 1, length($NF) - 1) }' >"$T/ours"
	awk 'NR == FNR { ours[$1] = 1; next }
	     { split($1, f, ";"); if (f[1] in ours) n += $NF } END { print n + 0 }' "$T/ours" "$1"
}

for backend in perf-fp bpf; do
	"$PROFCTL" --address="$BUS" record -a -F 999 -d 6 --backend "$backend" -o "$T/$backend.folded" \
		2>"$T/$backend.err" &
	record=$!
	killed=$(crash_unwinders 5)
	wait $record || fail "the $backend session failed: $(cat "$T/$backend.err")"
	((killed >= 1)) || fail "no unwinder of uid $OTHER was killed during the $backend session"
	total=$(awk '{ n += $NF } END { print n + 0 }' "$T/$backend.folded")
	((total >= 100)) || fail "$backend: $total samples of the machine, too few to tell"
	n=$(unwinder_samples "$T/$backend.folded")
	((n == 0)) || fail "$backend: $n of $total samples are of profd's unwinders ($(tr '\n' ' ' <"$T/ours")): $(grep '^profd-unwinder' "$T/$backend.folded" | cut -d';' -f1 | sort | uniq -c)"
	ok "$backend: $killed of $(wc -l <"$T/ours") unwinders killed, none of their samples among the machine's $total"
done
