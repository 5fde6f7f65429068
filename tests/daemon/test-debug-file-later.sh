#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A debug file that appears after a module was first named (a -dbgsym package
# installed later, a debuginfod fetch that completed later) is used by the
# next session: the daemon's unwinder keeps what it learnt of a module across
# sessions, and a module first named without DWARF must not stay so for the
# module's life. A stripped copy of workload-split with a .gnu_debuglink, its
# debug file put beside it only after a first session named the copy.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/bin" "$T/debug"
objcopy --only-keep-debug "$WORKLOAD_SPLIT" "$T/debug/workload-later.debug"
objcopy --strip-all --add-gnu-debuglink="$T/debug/workload-later.debug" "$WORKLOAD_SPLIT" \
	"$T/bin/workload-later"
! readelf -S "$T/bin/workload-later" | grep -qE '\.symtab|\.debug_info' ||
	fail "the stripped workload still has a .symtab or DWARF"

# named_split PID: "HEAVY LIGHT UNNAMED" samples of a finished 1 s session of PID
named_split() {
	local path
	path=$(finished_session "$1" 499 1000000)
	"$EXPORT_TO_FD" "$BUS" "$path" folded "$T/folded" 2>/dev/null || fail "ExportToFd folded failed"
	awk '/split_heavy/ { h += $NF } /split_light/ { l += $NF } /workload-later\+0x/ { u += $NF }
		END { print h + 0, l + 0, u + 0 }' "$T/folded"
}

start_bus
start_profd
spawn "$T/bin/workload-later" 120 1
wait_until 30 runs_program "$SPAWNED" "$T/bin/workload-later" || fail "the stripped workload did not start"
pid=$SPAWNED

read -r heavy light unnamed < <(named_split $pid)
((heavy == 0 && light == 0 && unnamed > 0)) ||
	fail "without its debug file: split_heavy $heavy, split_light $light, unnamed $unnamed"
ok "without its debug file the workload is unnamed ($unnamed samples)"

# the debug file beside the binary, where its .gnu_debuglink leads
cp "$T/debug/workload-later.debug" "$T/bin/"
read -r heavy light unnamed < <(named_split $pid)
((heavy > light && light > 0)) ||
	fail "the next session does not name split_* from the debug file that came: split_heavy $heavy, split_light $light, unnamed $unnamed"
ok "the next session names from the debug file that came: split_heavy $heavy, split_light $light ($unnamed unnamed)"
