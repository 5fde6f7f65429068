#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hostile inputs from an unprivileged caller's own processes (DESIGN.md §8):
# binaries whose CFI and DWARF were damaged on purpose (mutated copies of a
# real one), a stack full of crafted return addresses, a perf map with huge
# and malformed lines. Each is profiled by uid 65534; whatever its unwinder
# makes of them (a named profile, a failed session, a crash), profd keeps
# answering, uid 2's session running meanwhile completes with nothing lost,
# and uid 2's unwinder never notices (the same process throughout).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/unwinder-lib.sh"
: "${WORKLOAD_CRAFTED_STACK:?}" "${WORKLOAD_JIT:?}"

# an unwinder that a hostile file sends into a loop is given up on sooner than by default
cat >"$T/profd.conf" <<EOC
[Profiler]
UnwinderTimeoutSec=3
UnwinderIdleSec=600
MaxDurationSec=900
EOC
start_bus
start_profd
profd_pid=$PROFD_PID

# uid 2's session runs across the whole attack
spawn_workload 2 "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 300 2
victim=$(session_as "${AS_OTHER[@]}" -- "$SPAWNED" 499 600000000)
[[ -n $victim ]] || fail "uid $OTHER's session did not start"
wait_until 30 has_unwinder $OTHER || fail "no unwinder for uid $OTHER"
victim_unwinder=$(unwinder_pid $OTHER)

outcomes=()
# profile_hostile PID: a 1.5 s session of uid 65534 on PID; profd must stay up and answer
profile_hostile() {
	local s state
	s=$(session_as "${AS_NOBODY[@]}" -- "$1" 999 1500000)
	[[ -n $s ]] || fail "uid $NOBODY's session on $1 did not start"
	state=$(wait_finished "$s" 60)
	kill -0 "$profd_pid" 2>/dev/null || fail "profd died on a hostile input"
	mgr ListRuns >/dev/null || fail "profd stopped answering"
	[[ $state == completed ]] || echo "# uid $NOBODY's session on $1: $state: $(prop "$s" Error)"
	outcomes+=("$state")
}

mkdir -m 755 "$T/hostile"
sets=(".eh_frame .eh_frame_hdr" ".debug_info .debug_abbrev" ".debug_line .debug_str .debug_line_str"
      ".eh_frame .debug_info .debug_abbrev .debug_line .debug_rnglists .debug_loclists"
      ".symtab .strtab .eh_frame")
for i in "${!sets[@]}"; do
	for seed in 1 2; do
		bin=$T/hostile/split-$i-$seed
		# shellcheck disable=SC2086
		"$(dirname "$0")/mutate-elf.py" "$WORKLOAD_SPLIT" "$bin" "$seed" ${sets[$i]} ||
			fail "cannot mutate the workload"
		chmod 755 "$bin"
		spawn "${AS_NOBODY[@]}" "$bin" 60 1
		wait_until 30 runs_program "$SPAWNED" "$bin" 1 || fail "the mutated workload did not start"
		profile_hostile "$SPAWNED"
		kill "$SPAWNED" 2>/dev/null || true
	done
done
ok "binaries with damaged CFI, DWARF and symbols: profd stays up (${outcomes[*]})"

outcomes=()
spawn "${AS_NOBODY[@]}" "$WORKLOAD_CRAFTED_STACK" 30
wait_until 30 runs_program "$SPAWNED" "$WORKLOAD_CRAFTED_STACK" 1 || fail "the crafted stack did not start"
profile_hostile "$SPAWNED"
kill "$SPAWNED" 2>/dev/null || true
ok "a stack of crafted return addresses: profd stays up (${outcomes[*]})"

outcomes=()
spawn "${AS_NOBODY[@]}" "$WORKLOAD_JIT" 30
jit=$SPAWNED
wait_until 30 test -s /tmp/perf-$jit.map || fail "the JIT workload wrote no perf map"
# its own user replaces the map: every range, huge and malformed lines, a name of 4 MB
as_nobody /usr/bin/python3 - "$jit" <<'EOP'
import sys
with open("/tmp/perf-%s.map" % sys.argv[1], "w", errors="surrogateescape") as f:
    f.write("0 ffffffffffffffff " + "A" * (4 << 20) + "\n")
    f.write("zzzz 10 not-hex\n\n   \n-1 -1 negative\n")
    f.write("\udcff\udcfe binary \udc80\n")
    for i in range(200000):
        f.write("%x %x f%d\n" % (0x1000 + i * 7, 0xffffffff - i, i))
    f.write("1000 " + "f" * 100000 + " no-newline-at-end")
EOP
profile_hostile "$jit"
kill "$jit" 2>/dev/null || true
ok "a perf map with huge and malformed lines: profd stays up (${outcomes[*]})"

[[ $(prop "$victim" State) == sampling ]] || fail "uid $OTHER's session ended early: $(prop "$victim" Error)"
bctl call $DEST "$victim" $SES Stop
[[ $(wait_finished "$victim" 60) == completed ]] || fail "uid $OTHER's session failed: $(prop "$victim" Error)"
[[ $(prop "$victim" SamplesDropped) == 0 ]] || fail "uid $OTHER's session dropped $(prop "$victim" SamplesDropped)"
[[ $(unwinder_pid $OTHER) == "$victim_unwinder" ]] && kill -0 "$victim_unwinder" 2>/dev/null ||
	fail "uid $OTHER's unwinder was disturbed"
ok "uid $OTHER's session completed beside it all, nothing dropped, its unwinder untouched"
