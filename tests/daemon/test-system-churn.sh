#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Root's whole-machine sessions (bpf, perf-fp, perf-dwarf) while shell loops fork and
# exec /bin/true continuously, each beside `perf record -a -g` over the same
# window: profd's profile holds as large a share of its samples in the
# short-lived `true` processes as perf's does (they are gone by the time
# their records are read: not excluded, their rings not overrun by the side
# band of thousands of processes), and names as large a share of its leaf
# frames (a file the first process asked through could no longer hand over
# is had through another; in DWARF mode, where each process has its own
# address space, the file another process handed over is used again). Shares
# of the same window, compared as ratios.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || { echo "SKIP: whole-machine sessions are root's"; exit 77; }
command -v perf >/dev/null || { echo "SKIP: no perf"; exit 77; }
seconds=4

start_bus
start_profd
for _ in 1 2; do
	bash -c 'while :; do /bin/true; done' &
	CHILDREN+=($!)
done

# "SAMPLES TRUE NAMED" of a folded profile: its samples, those of processes named true,
# and those whose leaf frame has a name (not module+0xADDR nor a bare address)
folded_shares() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";")
	       total += n; if (f[1] ~ /^true-[0-9]+$/) t += n
	       if (f[k] !~ /\+0x[0-9a-f]+$/ && f[k] !~ /^0x[0-9a-f]+$/ && f[k] != "[unknown]") named += n }
	     END { print total + 0, t + 0, named + 0 }' "$1"
}
# the same of perf's samples: a line of its comm, then (a tab first) its leaf frame
perf_shares() {
	perf script -i "$1" -F comm,ip,sym --max-stack=1 2>/dev/null | awk '
		NF == 0 { next }
		/^\t/ { if ($2 != "[unknown]") named++; next }
		{ total++; if ($1 == "true") t++ }
		END { print total + 0, t + 0, named + 0 }'
}

for backend in bpf perf-fp perf-dwarf; do
	perf record -a -g -F 99 -o "$T/$backend.perf" -- sleep "$seconds" >/dev/null 2>&1 &
	perf=$!
	"$PROFCTL" --address="$BUS" record -a -F 99 -d "$seconds" --backend "$backend" \
		-o "$T/$backend.folded" 2>"$T/$backend.err" ||
		fail "the $backend session failed: $(cat "$T/$backend.err")"
	wait $perf || fail "perf record failed"
	read -r total true named < <(folded_shares "$T/$backend.folded")
	read -r ptotal ptrue pnamed < <(perf_shares "$T/$backend.perf")
	echo "$backend: profd $total samples, $true in true, $named with a named leaf;" \
		"perf $ptotal, $ptrue, $pnamed"
	((ptotal >= 100 && total >= 100)) || fail "$backend: too few samples to compare"
	# the loops ran: perf saw the true processes (else there is nothing to compare)
	((ptrue >= 10)) || fail "$backend: perf saw $ptrue samples of true in $ptotal"
	# shares of the same window: profd's at least half of perf's
	((2 * true * ptotal >= ptrue * total)) ||
		fail "$backend: $true of $total samples in true processes, perf $ptrue of $ptotal"
	# named leaves: at least 80% of perf's share (their naming differs in details)
	((10 * named * ptotal >= 8 * pnamed * total)) ||
		fail "$backend: $named of $total leaves named, perf $pnamed of $ptotal"
	ok "$backend: the churning processes' samples are kept and named as perf's are"
done
