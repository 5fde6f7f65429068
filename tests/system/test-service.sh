#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profd.service under a booted systemd: bus activation (also by many clients
# at once), start/stop/restart, StatusText, the journal, and what the unit
# gives the process (capabilities, limits, seccomp, no new privileges).
source "$(dirname "$0")/lib.sh"

boot_system
alice=$(add_user alice)

# installed, not running: the first call starts it, from any user
[[ $(in_container systemctl is-active profd.service) == inactive ]] ||
	fail "profd.service runs before anyone asked for it"
version=$(as_user alice busctl get-property $DEST $MGR_PATH $MGR Version) ||
	fail "uid $alice's first call did not activate profd"
[[ $version == 's "'* ]] || fail "Version is '$version'"
pid=$(wait_active)
ok "bus activation by uid $alice's first call (profd pid $pid, $version)"

# profctl without options talks to the system bus, also from a login's
# environment that names a session bus (there is none: it would fail)
out=$(as_user alice env XDG_RUNTIME_DIR=/run/user/$alice \
	DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$alice/bus profctl runs 2>&1) ||
	fail "profctl runs as uid $alice: $out"
out=$(in_container profctl sessions) || fail "profctl sessions as root: $out"
ok "profctl with no options finds profd on the system bus"

# STATUS= and READY=1 (Type=notify: active only after READY=1)
status=$(in_container systemctl show -P StatusText profd.service)
[[ $status =~ ^[0-9]+\ sessions\ sampling ]] || fail "StatusText is '$status'"
ok "StatusText: $status"

# the process the unit made
proc_status=$(in_container cat /proc/$pid/status)
capeff=$(awk '/^CapEff:/ { print $2 }' <<<"$proc_status")
capbnd=$(awk '/^CapBnd:/ { print $2 }' <<<"$proc_status")
# CAP_DAC_READ_SEARCH 2, CAP_IPC_LOCK 14, CAP_SYS_PTRACE 19, CAP_SYSLOG 34, CAP_PERFMON 38,
# CAP_BPF 39, CAP_CHECKPOINT_RESTORE 40
want=$(printf '%016x' $(((1 << 2) | (1 << 14) | (1 << 19) | (1 << 34) | (1 << 38) | (1 << 39) | (1 << 40))))
[[ $capeff == "$want" && $capbnd == "$want" ]] ||
	fail "capabilities: effective $capeff, bounding $capbnd, want $want (DESIGN.md §8)"
grep -qx $'NoNewPrivs:\t1' <<<"$proc_status" || fail "NoNewPrivs is not set"
grep -qx $'Seccomp:\t2' <<<"$proc_status" || fail "no seccomp filter"
[[ $(in_container stat -c %u /proc/$pid) == 0 ]] || fail "profd does not run as root"
# LimitNOFILE=65536, or the closest systemd could set: a test runner without
# CAP_SYS_RESOURCE cannot give the container a hard limit above its own (see
# lib.sh); profd raises its soft limit to the hard one itself
[[ $(in_container systemctl show -P LimitNOFILE profd.service) == 65536 ]] ||
	fail "LimitNOFILE=$(in_container systemctl show -P LimitNOFILE profd.service)"
pid1_hard=$(in_container awk '/^Max open files/ { print $5 }' /proc/1/limits)
want_fds=$((pid1_hard < 65536 ? pid1_hard : 65536))
limits=$(in_container cat /proc/$pid/limits)
grep -Eq "^Max open files +$want_fds +$want_fds " <<<"$limits" ||
	fail "open files limit: $(grep 'open files' <<<"$limits"), want $want_fds (soft raised to hard)"
ok "root with exactly the seven capabilities of DESIGN.md §8, NoNewPrivs, seccomp, $want_fds fds (soft = hard)"

# the journal gets profd's lines with their priority, not the "<N>" prefix
journal=$(in_container journalctl -q -o json -u profd.service --output-fields=MESSAGE,PRIORITY,_PID \
	_PID="$pid")
[[ -n $journal ]] || fail "nothing from profd (pid $pid) in the journal"
if python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin if l.strip()]
sys.exit(0 if all(not l["MESSAGE"].startswith("<") for l in lines)
         and any(int(l["PRIORITY"]) >= 5 for l in lines) else 1)' <<<"$journal"; then
	ok "journal: $(wc -l <<<"$journal") line(s) from profd with their priority"
else
	fail "journal lines keep the <N> prefix or have no priority: $journal"
fi

# systemctl stop: clean exit; the next call activates it again
in_container systemctl stop profd.service
[[ $(in_container systemctl show -P Result profd.service) == success ]] ||
	fail "systemctl stop: Result=$(in_container systemctl show -P Result profd.service)"
[[ $(in_container systemctl show -P ExecMainStatus profd.service) == 0 ]] ||
	fail "profd exited $(in_container systemctl show -P ExecMainStatus profd.service) on SIGTERM"
starts=$(in_container journalctl -q -u profd.service -g '^Started ' | wc -l)
# many clients at once while it is down: one start, every call answered
calls=()
for i in $(seq 8); do
	if ((i % 2)); then
		as_user alice busctl call $DEST $MGR_PATH $MGR ListRuns >"$T/call.$i" 2>&1 &
	else
		in_container busctl call $DEST $MGR_PATH $MGR ListSessions >"$T/call.$i" 2>&1 &
	fi
	calls+=($!)
done
for i in "${!calls[@]}"; do
	wait "${calls[$i]}" || fail "call $((i + 1)) during activation failed: $(cat "$T/call.$((i + 1))")"
done
pid2=$(wait_active)
[[ $pid2 != "$pid" ]] || fail "profd was not restarted"
[[ $(in_container journalctl -q -u profd.service -g '^Started ' | wc -l) == $((starts + 1)) ]] ||
	fail "8 concurrent first calls started profd $(($(in_container journalctl -q -u profd.service -g '^Started ' | wc -l) - starts)) times"
ok "systemctl stop exits 0; 8 concurrent calls while stopped: all answered, one activation (pid $pid2)"

# systemctl restart and start
in_container systemctl restart profd.service
pid3=$(wait_active)
[[ $pid3 != "$pid2" ]] || fail "systemctl restart kept pid $pid2"
in_container busctl get-property $DEST $MGR_PATH $MGR Version >/dev/null || fail "no answer after restart"
in_container systemctl stop profd.service
in_container systemctl start profd.service
pid4=$(wait_active)
[[ $(in_container systemctl show -P NRestarts profd.service) == 0 ]] ||
	fail "NRestarts=$(in_container systemctl show -P NRestarts profd.service) without a failure"
ok "systemctl restart (pid $pid3) and start (pid $pid4)"

# calls racing a stop: profd is saving a running session when they arrive;
# each is answered, by the stopping profd or by the one they activate
target=$(spawn_as root $TESTS_BIN/workload-split 60 1)
reply=$(mgr StartSession 'uuta{sv}' "$target" 999 30000000 0) || fail "cannot start a session: $reply"
read -r _ _ path <<<"$reply"
wait_session "${path//\"/}" sampling
pid5=$(main_pid)
in_container systemctl stop --no-block profd.service
calls=()
for i in $(seq 6); do
	as_user alice timeout 60 busctl call $DEST $MGR_PATH $MGR ListRuns >"$T/race.$i" 2>&1 &
	calls+=($!)
done
for i in "${!calls[@]}"; do
	wait "${calls[$i]}" || fail "call $((i + 1)) racing systemctl stop failed: $(cat "$T/race.$((i + 1))")"
done
for _ in $(seq 300); do # the stop job ends; a call may have started profd again
	[[ $(in_container systemctl show -P Job profd.service) == "" ]] && break
	sleep 0.1
done
[[ $(in_container systemctl show -P Result profd.service) == success ]] ||
	fail "stop with calls racing it: Result=$(in_container systemctl show -P Result profd.service)"
in_container busctl get-property $DEST $MGR_PATH $MGR Version >/dev/null || fail "no profd after the race"
[[ $(main_pid) != "$pid5" ]] || fail "profd (pid $pid5) did not stop"
ok "6 calls racing systemctl stop (a session being saved): all answered; Result=success"
