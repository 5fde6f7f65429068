#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The unwinder's heap check (#14, unwinder-serve.c keep_heap_within_cap()): a module is
# charged its names, unwind table and debug sections, not what libdw builds as it names,
# so after each session the unwinder compares its heap (mallinfo2) with
# SymbolCacheMaxBytes and, over it, lowers its cache's cap in proportion. Here libdw
# inflates libc's compressed debug sections on the unwinder's heap (no inflated copies:
# their directory made unusable) and the cap is set just above what libc's module is
# charged — the sum of its inflated debug sections, read from the copy profd makes, and
# 1 MiB — so that the cap alone keeps the module and only the heap check sees it is over:
# the unwinder reports its heap, the cap and the lowered cap on profd's log.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"

libc_compressed_debug

# what module-naming.c charges for libc's debug info: its sections that are not loaded, inflated
start_bus
start_profd
wait_until 60 grep -q "made an inflated copy of debug file '$build_id-" "$T/profd.log" ||
	fail "profd made no inflated copy of libc's debug file"
stop_profd
charged=$(python3 - "$T"/state/inflated-debug/"$build_id"-*.debug <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
shoff, = struct.unpack_from('<Q', data, 0x28)
shentsize, shnum = struct.unpack_from('<HH', data, 0x3a)
total = 0
for i in range(shnum):
    _, sh_type, sh_flags, _, _, sh_size = struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize)
    if sh_type not in (0, 8) and not sh_flags & 2:  # not SHT_NULL, SHT_NOBITS, SHF_ALLOC
        total += sh_size
print(total)
EOF
)
((charged > 4 * 1024 * 1024)) || fail "libc's debug sections are only $charged bytes"
cap=$((charged + 1024 * 1024))

split_session_uncopied "$(printf 'SymbolCacheMaxBytes=%s\nUnwinderIdleSec=600' $cap)"

line=$(grep -o "profd-unwinder: heap of [0-9]* bytes over SymbolCacheMaxBytes=[0-9]*: the symbol cache ([0-9]* bytes) keeps at most [0-9]*" "$T/profd.log" | tail -n 1)
[[ -n $line ]] || fail "the unwinder did not lower its cache's cap (cap $cap, libc charged $charged)"
read -r heap said held lowered <<<"$(grep -o '[0-9][0-9]*' <<<"$line" | tr '\n' ' ')"
((said == cap)) || fail "the unwinder reports the cap $said, profd.conf says $cap"
((heap > cap && held >= charged && held <= cap)) ||
	fail "heap $heap, cache $held, cap $cap, libc charged $charged: not what the check is for"
((lowered < held && lowered == cap * held / heap)) ||
	fail "the cap was lowered to $lowered (cache $held, heap $heap, cap $cap)"
pid=$(unwinder_pid 0)
rss=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status")
((rss * 1024 < cap)) || fail "the unwinder holds $rss KiB after the check, over the cap of $cap bytes"
ok "heap $heap bytes over the cap $cap with libc's module kept ($held bytes charged): cap lowered to $lowered, the unwinder at $rss KiB"
