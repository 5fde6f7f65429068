#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Root's sessions of many processes are named by uid 0's sandboxed unwinder,
# never inside profd (DESIGN.md §8), whatever the backend: whole-machine
# sessions of root (perf-dwarf; bpf, whose in-kernel counts reach the unwinder
# as weighted samples; 'auto', which picks bpf where it runs) while uid 65534
# runs binaries whose CFI and DWARF were damaged on purpose (mutate-elf.py, as
# in test-hostile.sh), beside a benign workload of root's.
# During each session uid 0's unwinder runs and profd never maps a hostile
# file (the unwinder does, at least once); profd keeps answering; a session
# that completed names the benign process (split_heavy) and holds the hostile
# one; one that failed says its unwinder failed. Then uid 0's unwinder killed
# mid-session: root's session goes on with a new one (twice), or fails once
# it died a fourth time.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

# an unwinder that a hostile file sends into a loop is given up on sooner than by default, not
# so soon that a cold start on every process of a loaded machine is taken for one
cat >"$T/profd.conf" <<EOC
[Profiler]
UnwinderTimeoutSec=10
UnwinderIdleSec=600
EOC
start_bus
start_profd
mkdir -m 755 "$T/hostile" "$T/out"

# watch_maps PID FILE: until PID exits or the watch is killed, append the lines of its maps
# that name a hostile file to FILE
watch_maps() {
	while [[ -r /proc/$1/maps ]]; do
		grep -F "$T/hostile/" "/proc/$1/maps" >>"$2" 2>/dev/null
		sleep 0.05
	done
}

spawn_workload "$WORKLOAD_SPLIT" 300 1
benign=$SPAWNED
: >"$T/helper-maps"
completed=0
outcomes=()
sets=(".eh_frame .eh_frame_hdr" ".debug_info .debug_abbrev" ".debug_line .debug_str .debug_line_str"
      ".eh_frame .debug_info .debug_abbrev .debug_line .debug_rnglists .debug_loclists"
      ".symtab .strtab .eh_frame")
backends=(perf-dwarf perf-dwarf perf-dwarf perf-dwarf perf-dwarf)
# bpf where this machine and build run it (Backends lists it): the most damaged sets again
if bctl get-property $DEST $MGR_PATH $MGR Backends | grep -q '"bpf"'; then
	sets+=("${sets[3]}" "${sets[4]}")
	backends+=(bpf auto)
else
	echo "# bpf does not run here: perf-dwarf only"
fi
for i in "${!sets[@]}"; do
	backend=${backends[$i]}
	bin=$T/hostile/split-$i
	# shellcheck disable=SC2086
	"$(dirname "$0")/mutate-elf.py" "$WORKLOAD_SPLIT" "$bin" 1 ${sets[$i]} || fail "cannot mutate the workload"
	chmod 755 "$bin"
	spawn "${AS_NOBODY[@]}" "$bin" 60 1
	hostile=$SPAWNED
	wait_until 30 runs_program "$hostile" "$bin" 1 || fail "the mutated workload did not start"

	s=$(start_session 0 499 3000000 2 system b true backend s "$backend")
	[[ -n $s ]] || fail "root's $backend system session did not start"
	# 'auto' picks bpf for the whole machine where bpf runs
	[[ $backend == perf-dwarf || $(prop "$s" Backend) == bpf ]] ||
		fail "root's $backend system session runs $(prop "$s" Backend), not bpf"
	wait_until 30 has_unwinder 0 || fail "no unwinder for uid 0 during root's system session"
	helper=$(unwinder_pid 0)
	kill -0 "$helper" 2>/dev/null || fail "uid 0's unwinder $helper is not running during the session"
	: >"$T/profd-maps"
	spawn watch_maps "$PROFD_PID" "$T/profd-maps"
	profd_watch=$SPAWNED
	spawn watch_maps "$helper" "$T/helper-maps"
	helper_watch=$SPAWNED
	state=$(wait_finished "$s" 120)
	kill "$profd_watch" "$helper_watch" 2>/dev/null || true
	wait "$profd_watch" "$helper_watch" 2>/dev/null || true

	kill -0 "$PROFD_PID" 2>/dev/null || fail "profd died on a hostile input (set ${sets[$i]}, $backend)"
	mgr ListRuns >/dev/null || fail "profd stopped answering"
	[[ ! -s $T/profd-maps ]] ||
		fail "profd mapped a hostile file ($backend): $(sort -u "$T/profd-maps" | head -n 3)"
	if [[ $state == completed ]]; then
		"$EXPORT_TO_FD" "$BUS" "$s" folded "$T/out/folded" || fail "cannot export session $s"
		grep -q "workload-split-$benign;.*split_heavy" "$T/out/folded" ||
			fail "the $backend system profile does not name the benign process $benign: $(head -c 300 "$T/out/folded")"
		grep -q -- "-$hostile;" "$T/out/folded" ||
			fail "the $backend system profile lacks the hostile process $hostile: $(head -c 300 "$T/out/folded")"
		completed=$((completed + 1))
	else
		err=$(prop "$s" Error)
		[[ $err == *unwinder* ]] || fail "root's $backend system session failed, not by its unwinder: $err"
		echo "# set '${sets[$i]}', $backend: $err"
	fi
	outcomes+=("$backend:$state")
	kill "$hostile" 2>/dev/null || true
done
((completed > 0)) || fail "no system session beside a hostile binary completed (${outcomes[*]})"
[[ -s $T/helper-maps ]] || fail "uid 0's unwinder never mapped a hostile file: it did not name them"
ok "root's system sessions (perf-dwarf, bpf, auto) beside damaged binaries of uid $NOBODY (${outcomes[*]}): named by uid 0's unwinder, which mapped them, never profd; the benign process $benign named in each completed one"

# kill_unwinder TIMES: SIGKILL uid 0's unwinder TIMES times, each time once profd started the next
kill_unwinder() {
	local old
	for _ in $(seq "$1"); do
		old=$(unwinder_pid 0)
		kill -KILL "$old" 2>/dev/null || true # it may have been given up on meanwhile
		wait_until 30 new_unwinder "$old" || fail "no new unwinder for uid 0 after $old died"
		sleep 0.3
	done
}

# new_unwinder PID: profd started an unwinder for uid 0 after PID
new_unwinder() {
	local now
	now=$(unwinder_pid 0)
	[[ -n $now && $now != "$1" ]]
}

# new_unwinder_or_ended PID SESSION: the same, or SESSION is sampling no more
new_unwinder_or_ended() {
	new_unwinder "$1" || [[ $(prop "$2" State) != sampling ]]
}

# An unwinder that dies mid-session does not take root's system session with it: the
# session goes on with a new one, told what came before (the benign process started before
# the session, so its name and mappings reach the new unwinder only so), and counts what
# the dead ones took; a session whose unwinder keeps dying fails after a few restarts.
# (99 Hz: a new unwinder starts cold on the whole machine; less for it to catch up on)
s=$(start_session 0 99 6000000 2 system b true backend s perf-dwarf)
[[ -n $s ]] || fail "root's system session did not start"
wait_until 30 has_unwinder 0 && wait_until 30 sampled "$s" || fail "root's system session did not sample"
kill_unwinder 2
[[ $(wait_finished "$s" 120) == completed ]] ||
	fail "root's system session failed when its unwinder died: $(prop "$s" Error)"
restarts=$(metric "$s" unwinder_restarts)
lost=$(metric "$s" samples_lost_unwinder)
# a new unwinder silent past UnwinderTimeoutSec (cold, on a loaded machine) is a death of its own
((restarts >= 2)) || fail "unwinder_restarts is '$restarts', not 2 or more"
[[ $lost =~ ^[0-9]+$ ]] || fail "samples_lost_unwinder is '$lost'"
"$EXPORT_TO_FD" "$BUS" "$s" folded "$T/out/folded" || fail "cannot export session $s"
grep -q "workload-split-$benign;.*split_heavy" "$T/out/folded" ||
	fail "the resumed session does not name the benign process $benign: $(head -c 300 "$T/out/folded")"
grep -q "unwinder of uid 0 (pid [0-9]*): killed by signal 9.*1 session(s) go on with a new one" \
	"$T/profd.log" || fail "profd did not log the restart"
ok "root's system session completed through $restarts deaths of its unwinder ($lost samples lost with them), the benign process named after them"

# kill its unwinders until the session fails: however many of the deaths were ours (a cold
# new unwinder on a loaded machine may also be given up on after the timeout), the fourth
# one fails it, saying so
s=$(start_session 0 99 60000000 2 system b true backend s perf-dwarf)
[[ -n $s ]] || fail "root's system session did not start"
wait_until 30 sampled "$s" || fail "root's system session did not sample"
for _ in $(seq 8); do
	[[ $(prop "$s" State) == sampling ]] || break
	old=$(unwinder_pid 0)
	kill -KILL "$old" 2>/dev/null || true
	wait_until 30 new_unwinder_or_ended "$old" "$s" || fail "no new unwinder for uid 0 after $old died"
done
[[ $(wait_finished "$s" 60) == failed ]] || fail "a session whose unwinder kept dying did not fail"
err=$(prop "$s" Error)
[[ $err == *"died 4 times in this session: not restarted again"* ]] || fail "the error does not say why: $err"
ok "a session whose unwinder died 4 times fails: $err"

# profd serves everyone after it all
as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR ListSessions >/dev/null ||
	fail "uid $OTHER is not answered after the hostile sessions"
s=$(start_session "$benign" 499 1000000)
[[ $(wait_finished "$s" 60) == completed ]] || fail "a later session of root failed: $(prop "$s" Error)"
ok "profd answers uid $OTHER and completes root's next session"
