#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Unit and cgroup targets under the installed unit, against systemd's real
# GetUnit/ControlGroup and the cgroup tree ProtectControlGroups= leaves
# read-only: root profiles a system unit by name and by cgroup, the whole
# machine and one process with bpf (in the container's pid namespace); an ordinary
# user's own user unit (her user manager started it) is profiled, its stacks
# named by her sandboxed unwinder (a same-named system unit is not hers); she is
# refused a system unit (also one that runs as her) and the whole machine, and
# another user her unit, each with AccessDenied saying why; by name he finds
# only his own units.
source "$(dirname "$0")/lib.sh"

boot_system
alice=$(add_user alice)
bob=$(add_user bob)

# named_in FILE FUNCTION: FILE (a folded profile inside) has samples in FUNCTION
named_in() {
	in_container awk -v f="$2" 'index($0, f) { n += $NF } END { exit !(n > 0) }' "$1"
}

# a system unit
in_container systemd-run --quiet --unit=spin-system $TESTS_BIN/workload-split 60 1 ||
	fail "systemd-run --unit=spin-system failed"
system_cg=$(in_container systemctl show -P ControlGroup spin-system.service)
[[ $system_cg == /system.slice/spin-system.service ]] || fail "spin-system.service's cgroup is '$system_cg'"
out=$(in_container profctl record --unit spin-system.service -d 2 -o /root/unit.folded 2>&1) ||
	fail "root cannot profile spin-system.service: $out"
named_in /root/unit.folded split_heavy || fail "root's profile of spin-system.service is unnamed: $out"
out=$(in_container profctl record --cgroup "$system_cg" -d 1 -o /root/cgroup.folded 2>&1) ||
	fail "root cannot profile cgroup $system_cg: $out"
named_in /root/cgroup.folded split_heavy || fail "root's profile of cgroup $system_cg is unnamed: $out"
ok "root profiled the system unit spin-system.service by name and by its cgroup $system_cg"

# the whole machine, by bpf (auto's choice there when the build has it), and
# bpf on one process: the kernel's pids are not the ones profd sees in its
# container, the program names samples by profd's pid namespace
spin_pid=$(in_container systemctl show -P MainPID spin-system.service)
out=$(in_container profctl record -a -d 2 -o /root/all.folded 2>&1) || fail "root cannot profile the whole machine: $out"
backend=$(in_container journalctl -q -b -u profd.service | grep -o 'samples system .* with [a-z-]*/' | tail -n 1)
backend=${backend##* with }
[[ ! -f $BUILD_ROOT/bpf/profile.skel.h || $backend == bpf/ ]] ||
	fail "the whole machine was not sampled by bpf: $backend"
named_in /root/all.folded "workload-split-$spin_pid;split_heavy" ||
	fail "root's whole-machine profile has no workload-split-$spin_pid;split_heavy: $(in_container head -n 5 /root/all.folded)"
if [[ -f $BUILD_ROOT/bpf/profile.skel.h ]]; then
	out=$(in_container profctl record --backend bpf -p "$spin_pid" -d 1 -o /root/bpf.folded 2>&1) ||
		fail "root cannot profile process $spin_pid with bpf: $out"
	named_in /root/bpf.folded split_heavy || fail "root's bpf profile of process $spin_pid is unnamed: $out"
fi
ok "root profiled the whole machine (${backend%/}) and process $spin_pid by bpf: split_heavy named"

# alice's user unit, started by her user manager
start_user_manager alice >/dev/null
as_user_manager alice systemd-run --user --quiet --unit=spin $TESTS_BIN/workload-split 60 1 ||
	fail "systemd-run --user as uid $alice failed"
alice_cg=$(as_user_manager alice systemctl --user show -P ControlGroup spin.service)
[[ $alice_cg == "/user.slice/user-$alice.slice/user@$alice.service/"*spin.service ]] ||
	fail "alice's spin.service's cgroup is '$alice_cg'"
# a user's multi-process target: named by her own sandboxed unwinder
out=$(as_user alice profctl record --unit spin.service -d 2 -o /home/alice/unit.folded 2>&1) ||
	fail "uid $alice cannot profile her user unit spin.service: $out"
named_in /home/alice/unit.folded split_heavy ||
	fail "uid $alice's profile of her user unit is unnamed: $out $(in_container head -n 5 /home/alice/unit.folded)"
ok "uid $alice profiled her user unit spin.service ($alice_cg): split_heavy named by her unwinder"

# her user unit named like a system unit (dbus.service is both) is hers: her
# process in the profile, not the system unit's (nor AccessDenied for it)
in_container systemd-run --quiet --unit=twin $TESTS_BIN/workload-split 60 1 ||
	fail "systemd-run --unit=twin failed"
as_user_manager alice systemd-run --user --quiet --unit=twin $TESTS_BIN/workload-split 60 1 ||
	fail "systemd-run --user --unit=twin as uid $alice failed"
her_twin=$(as_user_manager alice systemctl --user show -P MainPID twin.service)
system_twin=$(in_container systemctl show -P MainPID twin.service)
out=$(as_user alice profctl record --unit twin.service -d 2 -o /home/alice/twin.folded 2>&1) ||
	fail "uid $alice cannot profile her twin.service: $out"
named_in /home/alice/twin.folded "workload-split-$her_twin;" ||
	fail "uid $alice's twin.service profile lacks her process $her_twin: $(in_container head -n 5 /home/alice/twin.folded)"
! named_in /home/alice/twin.folded "workload-split-$system_twin;" ||
	fail "uid $alice's twin.service resolved to the system's unit (process $system_twin)"
ok "uid $alice's --unit twin.service is her user unit, not the system unit of that name"

# refusals say why
if out=$(as_user alice profctl record --unit spin-system.service -d 1 -o /home/alice/no.folded 2>&1); then
	fail "uid $alice profiled the system unit spin-system.service"
fi
[[ $out == *"may not profile cgroup"*"$system_cg"* ]] || fail "uid $alice's refusal of a system unit does not say why: $out"
err=$(busctl_error as_user alice busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	0 99 1000000 1 unit s spin-system.service)
[[ $err == "org.freedesktop.DBus.Error.AccessDenied: uid $alice may not profile cgroup"* ]] ||
	fail "uid $alice's StartSession of a system unit: $err"
ok "uid $alice refused the system unit: $err"
err=$(busctl_error as_user bob busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	0 99 1000000 1 cgroup s "$alice_cg")
[[ $err == "org.freedesktop.DBus.Error.AccessDenied: uid $bob may not profile cgroup"* ]] ||
	fail "uid $bob's StartSession of uid $alice's unit: $err"
ok "uid $bob refused uid $alice's user unit: $err"
err=$(busctl_error as_user alice busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	0 99 1000000 1 system b true)
[[ $err == "org.freedesktop.DBus.Error.AccessDenied: uid $alice may not profile the whole machine"* ]] ||
	fail "uid $alice's StartSession of the whole machine: $err"
ok "uid $alice refused the whole machine: $err"

# by name, bob's "spin.service" is his own or none: never alice's unit of that name
err=$(busctl_error as_user bob busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	0 99 1000000 1 unit s spin.service)
[[ $err == "org.freedesktop.DBus.Error.InvalidArgs: no unit 'spin.service' is loaded"* ]] ||
	fail "uid $bob's StartSession of unit spin.service (only uid $alice has one): $err"
ok "uid $bob's unit spin.service is not uid $alice's: $err"

# a system unit that runs as alice is still the system's (DESIGN §8: only below her
# user manager); her process in it she profiles by pid
in_container systemd-run --quiet --uid=alice --gid=alice --unit=alice-system \
	$TESTS_BIN/workload-split 60 1 || fail "systemd-run --uid=alice --unit=alice-system failed"
err=$(busctl_error as_user alice busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	0 99 1000000 1 unit s alice-system.service)
[[ $err == "org.freedesktop.DBus.Error.AccessDenied: uid $alice may not profile cgroup '/system.slice/alice-system.service'"* ]] ||
	fail "uid $alice's StartSession of the system unit alice-system.service that runs as her: $err"
alice_system_pid=$(in_container systemctl show -P MainPID alice-system.service)
out=$(as_user alice profctl record -p "$alice_system_pid" -d 1 -o /home/alice/own-system.folded 2>&1) ||
	fail "uid $alice cannot profile her process $alice_system_pid of a system unit: $out"
named_in /home/alice/own-system.folded split_heavy || fail "uid $alice's profile of process $alice_system_pid is unnamed: $out"
ok "uid $alice is refused the system unit alice-system.service that runs as her, and profiles its process $alice_system_pid by pid"
