#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Who may profile what under the installed unit (README "Security model"):
# an ordinary user profiles their own process, also one whose binary lives in
# their home directory (ProtectHome=read-only) and one their user manager
# started; another user is refused with AccessDenied saying why; root
# profiles anyone's process and gets named kernel frames.
source "$(dirname "$0")/lib.sh"

boot_system
alice=$(add_user alice)
bob=$(add_user bob)

# alice's program in her home directory (mode 0700: only she and root can read it)
in_container install -d -o alice -g alice -m 0700 /home/alice/bin
in_container install -o alice -g alice -m 0700 $TESTS_BIN/workload-split /home/alice/bin/
alice_pid=$(spawn_as alice /home/alice/bin/workload-split 60 2)

# alice profiles it with profctl, as the README shows
# 999 Hz: enough samples in 2 s for the 3:1 split to show even when a loaded machine gives
# the workload a tenth of a CPU
out=$(as_user alice profctl record -p "$alice_pid" -F 999 -d 2 -o /home/alice/split.folded 2>&1) ||
	fail "uid $alice cannot profile her own process $alice_pid: $out"
folded=$(in_container cat /home/alice/split.folded)
heavy=$(awk '/split_heavy/ { n += $NF } END { print n + 0 }' <<<"$folded")
light=$(awk '/split_light/ { n += $NF } END { print n + 0 }' <<<"$folded")
((heavy > 0 && light > 0 && heavy > light)) ||
	fail "uid $alice's profile lacks split_heavy > split_light ($heavy, $light): $(head -n 5 <<<"$folded")"
alice_run=$(as_user alice profctl --json runs | python3 -c '
import json, sys
runs = json.load(sys.stdin)
print(runs[0]["run_id"] if len(runs) == 1 else "")')
[[ -n $alice_run ]] || fail "uid $alice does not see exactly her one run"
ok "uid $alice profiled her own process (binary in /home, mode 0700): split_heavy $heavy, split_light $light"

# a program deleted while it runs (an upgrade replaces binaries so): its file
# is reached through /proc/PID/map_files
in_container install -o alice -g alice -m 0700 $TESTS_BIN/workload-split /home/alice/bin/split-gone
gone_pid=$(spawn_as alice /home/alice/bin/split-gone 60 1)
for _ in $(seq 100); do
	[[ $(in_container readlink /proc/$gone_pid/exe) == /home/alice/bin/split-gone ]] && break
	sleep 0.1
done
in_container rm /home/alice/bin/split-gone
out=$(as_user alice profctl record -p "$gone_pid" -d 2 -o /home/alice/gone.folded 2>&1) ||
	fail "uid $alice cannot profile her process $gone_pid whose binary was deleted: $out"
in_container grep -q split_heavy /home/alice/gone.folded ||
	fail "a deleted binary's functions are unnamed: $(in_container head -n 3 /home/alice/gone.folded)"
ok "uid $alice profiled her process whose binary was deleted while it ran: named"

# bob may not: profctl says why, and so does the D-Bus error
if out=$(as_user bob profctl record -p "$alice_pid" -d 1 -o /tmp/bob.folded 2>&1); then
	fail "uid $bob profiled uid $alice's process"
fi
[[ $out == *"may not profile process $alice_pid"*"another user"* ]] ||
	fail "uid $bob's refusal does not say why: $out"
err=$(busctl_error as_user bob busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	"$alice_pid" 99 1000000 0)
[[ $err == "org.freedesktop.DBus.Error.AccessDenied: "*"another user"* ]] ||
	fail "uid $bob's StartSession on uid $alice's process: $err"
bob_runs=$(as_user bob profctl --json runs)
[[ $bob_runs == "[]" ]] || fail "uid $bob sees runs that are not his: $bob_runs"
err=$(busctl_error as_user bob busctl call $DEST $MGR_PATH $MGR GetRun s "$alice_run")
[[ $err == org.profd.Profiler1.Error.NoSuchRun:* ]] || fail "uid $bob reading uid $alice's run: $err"
ok "uid $bob refused: $out"

# root may profile anyone's process
out=$(in_container profctl record -p "$alice_pid" -d 1 -o /root/alice.folded 2>&1) ||
	fail "root cannot profile uid $alice's process: $out"
in_container grep -q split_heavy /root/alice.folded || fail "root's profile of uid $alice's process is unnamed"
ok "root profiled uid $alice's process"

# root's profile of a process that lives in the kernel has named kernel frames
sys_pid=$(spawn_as root $TESTS_BIN/workload-syscalls 60)
out=$(in_container profctl record -p "$sys_pid" -d 2 -o /root/syscalls.folded -o /root/syscalls.pb.gz 2>&1) ||
	fail "root cannot profile process $sys_pid: $out"
folded=$(in_container cat /root/syscalls.folded)
total=$(awk '{ n += $NF } END { print n + 0 }' <<<"$folded")
named=$(awk '/write_null;.*entry_SYSCALL_64/ { n += $NF } END { print n + 0 }' <<<"$folded")
raw=$(grep -c 'kallsyms\]+0x' <<<"$folded" || true)
((named > 0 && raw == 0)) ||
	fail "root's kernel frames are not named ($named of $total samples under write_null;..;entry_SYSCALL_64, $raw stacks with raw addresses): $(head -n 3 <<<"$folded")"
# kernel addresses are >= 0xffff800000000000: in hex, or in decimal (JSON numbers);
# root's pprof profile has them (the check below would see them)
kernel_address='(0x)?ffff[89a-f][0-9a-f]{11}|1844(6[6-9]|7)[0-9]{15}'
HOME=$T go tool pprof -raw -symbolize=none "$ROOT/root/syscalls.pb.gz" >"$T/root.pprof.txt" 2>&1 ||
	fail "go tool pprof cannot read root's profile: $(head -n 3 "$T/root.pprof.txt")"
grep -Eiq "$kernel_address" "$T/root.pprof.txt" || fail "no kernel address in root's pprof profile"
ok "root's profile has named kernel frames ($named of $total samples under write_null -> entry_SYSCALL_64, none unnamed)"

# alice's own process in the kernel: with kernel.perf_event_paranoid >= 2 (the
# default) she could not read kernel frames herself, so none and no kernel
# address in any export; at <= 1 she could, and gets them named
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
alice_sys=$(spawn_as alice $TESTS_BIN/workload-syscalls 60)
out=$(as_user alice profctl record -p "$alice_sys" -d 2 -o /home/alice/sys.folded \
	-o /home/alice/sys.pb.gz -o /home/alice/sys.json -o /home/alice/sys.speedscope.json \
	-o /home/alice/sys.svg 2>&1) || fail "uid $alice cannot profile her process $alice_sys: $out"
grep -q write_null "$ROOT/home/alice/sys.folded" || fail "uid $alice's profile of her process is empty"
if ((paranoid <= 1)); then
	grep -q 'write_null;.*entry_SYSCALL_64' "$ROOT/home/alice/sys.folded" &&
		! grep -q 'kallsyms\]+0x' "$ROOT/home/alice/sys.folded" ||
		fail "uid $alice's kernel frames are missing or unnamed at perf_event_paranoid $paranoid"
	ok "uid $alice's profile of her process in the kernel has named kernel frames (perf_event_paranoid $paranoid)"
else
	as_user alice profctl record -p "$alice_sys" -d 1 -f record -o /home/alice/sys.record.json \
		>/dev/null 2>&1 || fail "uid $alice cannot write a run record"
	as_user alice profctl record -p "$alice_sys" -d 1 -f metrics -o /home/alice/sys.metrics.json \
		>/dev/null 2>&1 || fail "uid $alice cannot write metrics"
	! grep -Eq 'entry_SYSCALL|kallsyms' "$ROOT/home/alice/sys.folded" ||
		fail "uid $alice got kernel frames: $(grep -E 'entry_SYSCALL|kallsyms' "$ROOT/home/alice/sys.folded" | head -n 2)"
	HOME=$T go tool pprof -raw -symbolize=none "$ROOT/home/alice/sys.pb.gz" >"$T/sys.pprof.txt" 2>&1 ||
		fail "go tool pprof cannot read uid $alice's profile: $(head -n 3 "$T/sys.pprof.txt")"
	cp "$T/sys.pprof.txt" "$ROOT/home/alice/sys.pprof.txt"
	for f in sys.folded sys.pprof.txt sys.json sys.speedscope.json sys.svg sys.record.json \
		sys.metrics.json; do
		! grep -Eiq "$kernel_address" "$ROOT/home/alice/$f" ||
			fail "a kernel address in uid $alice's $f: $(grep -Eio "$kernel_address" "$ROOT/home/alice/$f" | head -n 1)"
	done
	err=$(busctl_error as_user alice busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
		"$alice_sys" 99 1000000 1 kernel b true)
	[[ $err == "org.freedesktop.DBus.Error.AccessDenied: kernel frames are only for root"* ]] ||
		fail "uid $alice asking for kernel frames: $err"
	ok "uid $alice's profile of her process in the kernel: no kernel frame, no kernel address in 7 formats; kernel=true refused (perf_event_paranoid $paranoid)"
fi

# a process alice's user manager started (a user unit)
start_user_manager alice >/dev/null
as_user_manager alice systemd-run --user --quiet --unit=spin $TESTS_BIN/workload-split 60 1 ||
	fail "systemd-run --user as uid $alice failed"
unit_pid=$(as_user_manager alice systemctl --user show -P MainPID spin.service)
[[ $unit_pid != 0 ]] || fail "alice's spin.service has no MainPID"
out=$(as_user alice profctl record -p "$unit_pid" -d 1 -o /home/alice/unit.folded 2>&1) ||
	fail "uid $alice cannot profile her user unit's process $unit_pid: $out"
in_container grep -q split_heavy /home/alice/unit.folded || fail "alice's user unit profile is unnamed"
ok "uid $alice profiled the process of her user unit spin.service (pid $unit_pid)"
