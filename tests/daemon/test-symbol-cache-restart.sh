#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The symbol cache on disk (#14 "cold start", DESIGN.md §8 "Caches"): after a
# restart, profd's first session of a binary it has seen is warm, from
# state/symbols/. Sessions are unwound by each caller's sandboxed unwinder,
# which loads and saves only its own uid's symbols/<uid>/ (root's too: a
# hostile target profiled by root must not plant names anyone else loads);
# damaged files are refused and cost only a cold session.
source "$(dirname "$0")/lib.sh"

# profile_cache_state AS PID: a 1 s session of PID started by AS; its run's cache_state
profile_cache_state() {
	local path state run_id
	path=$("$1" busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
		"$2" 999 1000000 0 | awk '{ print $3 }' | tr -d '"')
	[[ $path == /org/profd/* ]] || fail "StartSession on $2 gave '$path'"
	state=$(wait_finished "$path")
	[[ $state == completed ]] || fail "session of $2 $state: $(prop "$path" Error)"
	run_id=$(prop "$path" RunId)
	bctl --json=short call $DEST $MGR_PATH $MGR GetRun s "$run_id" |
		python3 -c 'import json, sys
print(json.loads(json.load(sys.stdin)["data"][0])["identity"]["cache_state"])'
}

# shared_files: what symbols/shared/ holds (names and sizes; a load touches the mtime)
shared_files() {
	find "$T/state/symbols/shared" -type f -printf '%f %s\n' 2>/dev/null | sort
}

prewarmed() {
	grep -q "the unwind table of '.*libc.so.*' is in the shared symbol store" "$T/profd.log"
}

# the kernel's symbols as profd keeps them across restarts: "INODE NAME", nothing when none
kernel_table() {
	find "$T/state/kernel-symbols/symbols/shared" -type f -printf '%i %f\n' 2>/dev/null
}

has_kernel_table() {
	[[ -n $(kernel_table) ]]
}

# addresses in /proc/kallsyms (kptr_restrict lets root see them): profd makes a table of them
kernel_addresses() {
	awk '$1 != "0000000000000000" { found = 1; exit } END { exit !found }' /proc/kallsyms
}

start_bus
start_profd
# profd's own files of the system C library (system-prewarm.h): the only ones it may hold
wait_until 60 prewarmed || fail "profd did not put libc's unwind table in symbols/shared"
shared_before=$(shared_files)
[[ -n $shared_before ]] || fail "nothing in symbols/shared"
if kernel_addresses; then
	wait_until 60 has_kernel_table || fail "profd kept no table of the kernel's symbols"
	kernel_before=$(kernel_table)
	[[ ! -e $T/state/symbols/shared/${kernel_before#* } ]] ||
		fail "the kernel's symbols are in symbols/shared, which unwinders may load"
	[[ $(stat -c %a "$T/state/kernel-symbols") == 700 ]] || fail "kernel-symbols/ is not private"
fi

spawn_workload "$WORKLOAD_SPLIT" 120 1
[[ $(profile_cache_state command $SPAWNED) == cold ]] || fail "the first session is not cold"
[[ $(profile_cache_state command $SPAWNED) == warm ]] || fail "the second session is not warm"
kill "$SPAWNED"
ok "first session cold, second warm"

# uid 65534's own copy of the workload: its names go to its own directory
mkdir "$T/nobody"
cp "$WORKLOAD_SPLIT" "$T/nobody/workload"
chown -R $NOBODY:$NOBODY "$T/nobody"
spawn "${AS_NOBODY[@]}" "$T/nobody/workload" 120 1
# past setpriv's exec: before it the process is root's, and uid 65534 may not profile it
wait_until 30 runs_program "$SPAWNED" "$T/nobody/workload" || fail "uid $NOBODY's workload did not start"
profile_cache_state as_nobody $SPAWNED >/dev/null
kill "$SPAWNED"

stop_profd
[[ $PROFD_RC == 0 ]] || fail "profd exited with $PROFD_RC on SIGTERM"
root=$(find "$T/state/symbols/0" -type f | wc -l)
own=$(find "$T/state/symbols/$NOBODY" -type f | wc -l)
((root >= 2)) || fail "$root files in symbols/0 (libc and the workload expected)"
((own >= 2)) || fail "$own files in symbols/$NOBODY (its binary and libc expected)"
[[ $(shared_files) == "$shared_before" ]] ||
	fail "an unwinder's names went to symbols/shared: $(shared_files) (at start: $shared_before)"
[[ $(stat -c %a "$T/state/symbols") == 700 && $(stat -c %a "$T/state/symbols/$NOBODY") == 700 ]] ||
	fail "symbols/ directories are not private"
bad=$(find "$T/state/symbols" -type f ! -perm 600 | head -1)
[[ -z $bad ]] || fail "$bad is not mode 600"
ok "after a clean stop: $root module files of uid 0, $own of uid $NOBODY, none shared but profd's own"

start_profd
spawn_workload "$WORKLOAD_SPLIT" 120 1
[[ $(profile_cache_state command $SPAWNED) == warm ]] ||
	fail "the first session after a restart is not warm"
kill "$SPAWNED"
ok "the first session after a restart is warm"

# every file damaged: refused, the session still works and is cold
stop_profd
# the restarted profd took the kernel's table from the file (a new read of /proc/kallsyms
# would have replaced it: another inode)
[[ $(kernel_table) == "${kernel_before:-}" ]] ||
	fail "a restart read the kernel's symbols again: '$(kernel_table)' (before: '${kernel_before:-}')"
[[ -z ${kernel_before:-} ]] || ok "a restart reads no /proc/kallsyms: the kernel's table is kept"
find "$T/state/symbols" -type f -exec sh -c 'printf garbage >>"$1"' _ {} \;
start_profd
spawn_workload "$WORKLOAD_SPLIT" 120 1
[[ $(profile_cache_state command $SPAWNED) == cold ]] ||
	fail "a damaged cache file was used"
bctl get-property $DEST $MGR_PATH $MGR Version >/dev/null || fail "profd stopped answering"
ok "damaged cache files are refused: the session is cold, nothing else happens"
