#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SymbolCacheMaxBytes holds in the caller's sandboxed unwinder, where the symbol
# cache lives (#14): a session of workload-split names libc with its separate
# debug file, whose compressed debug sections libdw inflates on the unwinder's
# heap (~10 MB for Debian's libc6-dbg). Under the default cap the unwinder keeps
# them for the next session; under a 1 MiB cap the module goes once no session
# maps it and its memory is given back.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

# (not built under AddressSanitizer: freed memory waits in its quarantine, the heap says nothing)
libc_compressed_debug

# unwinder_heap_kib CONFIG: profd with CONFIG (a fresh state directory) runs a 3 s session of
# workload-split; the RssAnon of uid 0's unwinder once the session completed
unwinder_heap_kib() {
	local path pid
	printf '%s\nUnwinderIdleSec=600\n' "$1" >"$T/profd.conf"
	rm -rf "$T/state"
	# no inflated copies of system debug files (their directory unusable): libdw inflates
	# libc's on the unwinder's heap, what this test weighs
	mkdir "$T/state"
	: >"$T/state/inflated-debug"
	start_profd
	spawn_workload 2 "$WORKLOAD_SPLIT" 60 2
	path=$(start_session "$SPAWNED" 999 3000000 1 kernel b false)
	[[ $(wait_finished "$path" 60) == completed ]] || fail "session failed: $(prop "$path" Error)"
	(($(prop "$path" SamplesCaptured) > 0)) || fail "the session took no sample"
	kill "$SPAWNED"
	pid=$(unwinder_pid 0)
	[[ -n $pid ]] || fail "no unwinder for uid 0"
	awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status"
	stop_profd
}

start_bus
kept=$(unwinder_heap_kib "")
capped=$(unwinder_heap_kib "SymbolCacheMaxBytes=1048576")
((kept - capped >= 5 * 1024)) ||
	fail "the unwinder holds ${capped} KiB with a 1 MiB cap, ${kept} KiB with the default"
ok "unwinder heap after a session naming libc: ${kept} KiB (default cap), ${capped} KiB (1 MiB cap)"
