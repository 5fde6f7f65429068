#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The systemd unit passes systemd-analyze verify and is hardened as
# DESIGN.md §6 asks; the bus policy lets only root own the name and everyone
# call it (checked on a dbus-daemon with a system-bus-like default policy).
source "$(dirname "$0")/lib.sh"
: "${PROFD_UNIT:?}" "${PROFD_BUS_POLICY:?}" "${PROFD_ACTIVATION:?}"

# verify checks that ExecStart exists: point it at the built binary
mkdir -p "$T/units"
sed "s|^ExecStart=[^ ]*|ExecStart=$PROFD|" "$PROFD_UNIT" >"$T/units/profd.service"
out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$T/units/profd.service" 2>&1) ||
	fail "systemd-analyze verify: $out"
[[ -z $out ]] || fail "systemd-analyze verify complained: $out"
ok "systemd-analyze verify"

for want in Type=notify BusName=org.profd.Profiler1 ProtectSystem=strict StateDirectory=profd \
	'SystemCallFilter=@system-service @debug bpf' \
	'SystemCallFilter=seccomp landlock_create_ruleset landlock_add_rule landlock_restrict_self'; do
	grep -qx "$want" "$PROFD_UNIT" || fail "the unit lacks $want"
done
grep -q '^LimitNOFILE=[0-9]' "$PROFD_UNIT" || fail "the unit lacks LimitNOFILE (threads x CPUs perf fds)"
# CAP_IPC_LOCK: perf rings beyond the per-user locked-memory limit; CAP_SYSLOG: kallsyms
# addresses; CAP_CHECKPOINT_RESTORE: /proc/PID/map_files
for cap in CAP_PERFMON CAP_BPF CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_IPC_LOCK CAP_SYSLOG \
	CAP_CHECKPOINT_RESTORE; do
	grep -q "^CapabilityBoundingSet=.*$cap" "$PROFD_UNIT" || fail "the bounding set lacks $cap"
	grep -q "^AmbientCapabilities=.*$cap" "$PROFD_UNIT" || fail "the ambient set lacks $cap"
done
! grep -q '^ProtectProc=invisible' "$PROFD_UNIT" || fail "ProtectProc=invisible hides the targets"
grep -qx 'SystemdService=profd.service' "$PROFD_ACTIVATION" || fail "activation file lacks SystemdService"
grep -qx 'Name=org.profd.Profiler1' "$PROFD_ACTIVATION" || fail "activation file lacks Name"
ok "unit hardening and activation file"

# a bus that, like the system bus, denies owning and calling unless allowed
BUS_TYPE=system
BUS_POLICY='<allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>'
BUS_INCLUDES="<include>$PROFD_BUS_POLICY</include>"
start_bus

mkdir -p "$T/nobody-state"
chown $NOBODY "$T/nobody-state"
if as_nobody "$PROFD" --address="$BUS" --state-dir="$T/nobody-state" --config=/dev/null \
	2>"$T/nobody.log"; then
	fail "profd running as uid 65534 was allowed to own the name"
fi
grep -q "cannot register org.profd.Profiler1" "$T/nobody.log" ||
	fail "profd as uid 65534 failed for another reason: $(cat "$T/nobody.log")"
ok "uid 65534 may not own org.profd.Profiler1"

start_profd
as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR ListRuns >/dev/null ||
	fail "uid 65534 may not call profd"
as_nobody busctl --address="$BUS" get-property $DEST $MGR_PATH $MGR Version >/dev/null ||
	fail "uid 65534 may not read profd's properties"
ok "root owns the name, uid 65534 may call"
