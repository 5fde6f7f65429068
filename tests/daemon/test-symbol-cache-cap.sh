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
	split_session_uncopied "$(printf '%s\nUnwinderIdleSec=600' "$1")"
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
