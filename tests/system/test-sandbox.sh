#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The sandbox profd.service builds, seen from inside: sandbox-probe runs in
# place of profd in a copy of the installed unit (only Type=, BusName=,
# Restart= and ExecStart= changed) and reports what it may do. Profiling works
# (perf events, kallsyms addresses, other processes' maps, a cgroup target:
# systemd's GetUnit/ControlGroup, the read-only cgroup tree, a perf event per
# cgroup); the kernel log,
# /proc/kcore, kernel tunables, IP sockets, other processes' memory and
# descriptors (ptrace, /proc/PID/mem, process_vm_readv, pidfd_getfd) and the
# file system outside the state directory do not; the unwinder helper can confine itself further
# (its own seccomp filter and Landlock ruleset).
source "$(dirname "$0")/lib.sh"

boot_system
# the probe, then what a unit target needs: systemd's GetUnit and ControlGroup
# over the system bus
cat >"$ROOT$TESTS_BIN/probe.sh" <<'EOS'
#!/bin/sh
/opt/profd-tests/sandbox-probe
unit=$(busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
	org.freedesktop.systemd1.Manager GetUnit s profd-probe.service | cut -d'"' -f2)
echo "unit_cgroup=$(busctl get-property org.freedesktop.systemd1 "$unit" \
	org.freedesktop.systemd1.Service ControlGroup 2>&1)"
EOS
chmod 755 "$ROOT$TESTS_BIN/probe.sh"
probe_unit profd-probe /bin/sh $TESTS_BIN/probe.sh
in_container systemctl start profd-probe.service ||
	fail "the probe failed: $(in_container journalctl -q -u profd-probe.service -o cat)"
results=$(in_container journalctl -q -u profd-probe.service -o cat --output-fields=MESSAGE |
	grep '^[a-z_0-9]*=')

# check=expected result(s), | between alternatives; "empty" is systemd's stub
# for an inaccessible file (mode 000 but readable with CAP_DAC_READ_SEARCH)
expect=(
	perf_event_open=ok kallsyms=addresses proc_1_maps=ok state_write=ok
	cgroup_open=ok cgroup_procs=ok cgroup_perf=ok unit_cgroup='s "/system.slice/profd-probe.service"'
	ptrace=EPERM proc_1_mem_write=EROFS pidfd_getfd=EPERM process_vm_readv=EPERM syslog=EPERM proc_kmsg=empty proc_kcore='empty|ENOENT'
	proc_sys_write=EROFS dev_kmsg=ENOENT socket_inet=EAFNOSUPPORT etc_write=EROFS
	seccomp=ok landlock='ok|EOPNOTSUPP'
)
for e in "${expect[@]}"; do
	check=${e%%=*}
	got=$(sed -n "s/^$check=//p" <<<"$results")
	[[ $got =~ ^(${e#*=})$ ]] || fail "in profd's sandbox $check is '${got:-missing}', want ${e#*=}"
done
! grep -q '^confine=failed' <<<"$results" || fail "the helper's self-confinement failed: $results"
ok "profd's sandbox: $(tr '\n' ' ' <<<"$results")"
