#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The system C library prepared once for every caller (#14, DESIGN.md §8 "Caches"),
# when profd starts (system-prewarm.h):
# - its compressed separate debug file inflated into state/inflated-debug/ and handed over
#   instead of the file itself to every unwinder that asks for it by build-id, so that no
#   unwinder — root's, another uid's, one after a restart — inflates libc's debug sections
#   again: seen in what each unwinder maps (libdw maps the debug file it reads) and in
#   profd's log (one copy made in all);
# - its unwind table compiled into state/symbols/shared/, which each uid's unwinder loads
#   instead of compiling it: seen in profd's log of the files it hands over from there.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

libc_compressed_debug

# took_shared UID: uid's unwinder loaded libc's module file from symbols/shared
took_shared() {
	grep -q "the unwinder of uid $1 takes module file $libc_module from symbols/shared" "$T/profd.log"
}

copies_made() {
	grep -c "made an inflated copy of debug file '$build_id-" "$T/profd.log"
}

copies_made_at_least() {
	(($(copies_made) >= $1))
}

# maps_copy UID: uid's newest unwinder maps libc's inflated copy and not the compressed file
maps_copy() {
	local pid
	pid=$(unwinder_pid "$1")
	[[ -n $pid ]] || fail "no unwinder for uid $1"
	grep -q "/inflated-debug/$build_id-" "/proc/$pid/maps" ||
		fail "uid $1's unwinder (pid $pid) does not map libc's inflated copy: $(grep -c "$debug" "/proc/$pid/maps") mappings of $debug"
	! grep -q "$debug" "/proc/$pid/maps" || fail "uid $1's unwinder maps the compressed $debug"
}

# session_of AS...: a 1 s session of a fresh workload-split run by AS (nothing: root), completed
session_of() {
	spawn_workload "$@" "$WORKLOAD_SPLIT" 60 1
	finished_session "$@" "$SPAWNED" 999 1000000 >/dev/null
	kill "$SPAWNED"
}

printf 'UnwinderIdleSec=600\n' >"$T/profd.conf"
start_bus
start_profd
wait_until 60 copies_made_at_least 1 ||
	fail "profd made no inflated copy of libc's debug file: $(grep inflated "$T/profd.log")"
copy=$(find "$T/state/inflated-debug" -name "$build_id-*.debug")
[[ -n $copy && $(stat -c %a "$copy") == 600 ]] || fail "no private copy: '$copy'"
readelf -n "$copy" | grep -q "Build ID: $build_id" || fail "the copy lost its build-id"
! readelf -SW "$copy" | grep -q '\.debug_.* C *[0-9]' || fail "the copy has compressed sections"
wait_until 60 grep -q "the unwind table of '.*libc.so.*' is in the shared symbol store" \
	"$T/profd.log" || fail "libc's unwind table is not in symbols/shared"
# the largest file there is libc's (ld.so's is a tenth of it)
libc_module=$(ls -S "$T/state/symbols/shared" | head -n 1)
ok "libc's debug file inflated at start: $(($(stat -c %s "$copy") / 1024)) KiB from $(($(stat -c %s "$debug") / 1024)) KiB"

session_of
maps_copy 0
session_of "${AS_NOBODY[@]}"
maps_copy $NOBODY
took_shared 0 || fail "root's unwinder did not load libc's module $libc_module from symbols/shared"
took_shared $NOBODY || fail "uid $NOBODY's unwinder did not load libc's module from symbols/shared"
ok "root's and uid $NOBODY's unwinders name libc from the inflated copy and load its table"

# a restarted unwinder that names a libc instruction no one named before (here: none kept)
stop_profd
rm -rf "$T/state/symbols"
start_profd
session_of "${AS_NOBODY[@]}"
maps_copy $NOBODY
(($(copies_made) == 1)) || fail "libc's debug file was inflated $(copies_made) times"
ok "after a restart too, and the copy was made once in all"

# a copy under another identity (of a file that changed since) is never handed over
stop_profd
mv "$copy" "$(dirname "$copy")/$build_id-0-0-0-0.000000000.debug"
rm -rf "$T/state/symbols" # libc named again, not from the names kept
start_profd
wait_until 60 copies_made_at_least 2 || fail "no new copy beside one of another identity"
session_of
maps_copy 0
! grep -q -- "-0-0-0-0.000000000.debug" "/proc/$(unwinder_pid 0)/maps" || fail "the other copy is used"
(($(find "$T/state/inflated-debug" -name "$build_id-*.debug" | wc -l) == 2)) ||
	fail "$(ls "$T/state/inflated-debug")"
ok "a copy named by another file's identity is not used: a new one is made"
