#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Bad input gets the documented answer and the daemon keeps serving: pid 0,
# dead pids, hz and duration 0 and huge (defaults and clamping, never
# refusals), unknown option keys, wrong option types, unknown backends,
# events and export formats.
source "$(dirname "$0")/lib.sh"

echo "MaxExportBytes=4096" >"$T/profd.conf"
start_bus
start_profd

start() { # PID HZ USEC OPTIONS...
	mgr StartSession 'uuta{sv}' "$@"
}

spawn_workload "$WORKLOAD_SPLIT" 120 1
target=$SPAWNED
true &
dead=$!
wait $dead

msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs start 0 99 1000000 0)
ok "pid 0: InvalidArgs: $msg"
msg=$(expect_error org.profd.Profiler1.Error.NoSuchProcess start "$dead" 99 1000000 0)
ok "dead pid: NoSuchProcess: $msg"
expect_error org.freedesktop.DBus.Error.InvalidArgs start 4294967295 99 1000000 0 >/dev/null
ok "pid 2^32-1: InvalidArgs"

check_session() { # PATH HZ DURATION_USEC CLAMPED (of a long session, then stopped)
	[[ $(prop "$1" Hz) == "$2" ]] || fail "Hz is $(prop "$1" Hz), not $2"
	[[ $(prop "$1" DurationUSec) == "$3" ]] || fail "DurationUSec is $(prop "$1" DurationUSec), not $3"
	[[ $(prop "$1" Clamped) == "$4" ]] || fail "Clamped is $(prop "$1" Clamped), not $4"
	bctl call $DEST "$1" $SES Stop
	wait_finished "$1" >/dev/null
}
max_hz=$(bctl get-property $DEST $MGR_PATH $MGR MaxHz | cut -d' ' -f2)
max_usec=$(bctl get-property $DEST $MGR_PATH $MGR MaxDurationUSec | cut -d' ' -f2)

p=$(start_session "$target" 0 30000000)
check_session "$p" 99 30000000 false
[[ $(prop "$p" RequestedHz) == 0 ]] || fail "RequestedHz does not keep the request"
ok "hz 0: the default 99 Hz"
p=$(start_session "$target" 4000000000 30000000)
check_session "$p" "$max_hz" 30000000 true
ok "hz 4000000000: clamped to MaxHz $max_hz"
p=$(start_session "$target" 99 0)
check_session "$p" 99 10000000 false
ok "duration 0: the default 10 s"
p=$(start_session "$target" 99 18446744073709551615)
check_session "$p" 99 "$max_usec" true
[[ $(prop "$p" RequestedDurationUSec) == 18446744073709551615 ]] ||
	fail "RequestedDurationUSec does not keep the request"
ok "duration 2^64-1: clamped to MaxDurationUSec $max_usec"

msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs start "$target" 99 1000000 1 colour s red)
[[ $msg == *colour* ]] || fail "the unknown key is not named: $msg"
ok "unknown option key: InvalidArgs: $msg"
msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs start "$target" 99 1000000 1 kernel s yes)
[[ $msg == *kernel* ]] || fail "the badly typed key is not named: $msg"
ok "wrong option type: InvalidArgs: $msg"
expect_error org.freedesktop.DBus.Error.InvalidArgs start "$target" 99 1000000 1 backend s magic >/dev/null
expect_error org.freedesktop.DBus.Error.InvalidArgs start "$target" 99 1000000 1 event s bogus >/dev/null
expect_error org.freedesktop.DBus.Error.InvalidArgs start "$target" 99 1000000 1 stack_bytes u 100000 >/dev/null
# bpf runs where this machine and build can (Backends lists it); elsewhere it is Unsupported
if bctl get-property $DEST $MGR_PATH $MGR Backends | grep -q '"bpf"'; then
	p=$(start_session "$target" 99 300000 1 backend s bpf)
	[[ $(prop "$p" Backend) == bpf ]] || fail "backend bpf not taken"
	# named by root's unwinder from the counts' weighted samples: the target's own functions
	[[ $(wait_finished "$p" 60) == completed ]] || fail "the bpf session failed: $(prop "$p" Error)"
	"$EXPORT_TO_FD" "$BUS" "$p" folded "$T/bpf.folded" || fail "cannot export the bpf session"
	grep -Eq "(split_heavy|split_light|workload_mix) [0-9]+$" "$T/bpf.folded" ||
		fail "the bpf session does not name the workload: $(head -c 300 "$T/bpf.folded")"
	ok "backend bpf: listed in Backends, taken, and its stacks named"
else
	msg=$(expect_error org.profd.Profiler1.Error.Unsupported start "$target" 99 1000000 1 backend s bpf)
	ok "backend bpf: Unsupported: $msg"
fi
if ! perf_cycles=$(start_session "$target" 99 300000 1 event s cycles 2>/dev/null) || [[ -z $perf_cycles ]]; then
	msg=$(expect_error org.profd.Profiler1.Error.Unsupported start "$target" 99 1000000 1 event s cycles)
	ok "event cycles without a PMU: Unsupported: $msg"
fi

# options that are fine, all at once
p=$(start_session "$target" 99 400000 5 backend s perf-fp kernel b false stack_bytes u 8192 \
	ring_capacity t 1000 workload_class s bench)
[[ $(prop "$p" Backend) == perf-fp ]] || fail "backend option ignored"
[[ $(wait_finished "$p") == completed ]] || fail "a perf-fp session failed: $(prop "$p" Error)"
run=$(prop "$p" RunId)
mgr ListRuns | grep -q "\"$run\" \"completed\" \"pid\" \"bench\"" || fail "workload_class option ignored"
ok "all options accepted with the right types"

msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs bctl call $DEST "$p" $SES Export s jpeg)
ok "unknown export format: InvalidArgs: $msg"
msg=$(expect_error org.freedesktop.DBus.Error.LimitsExceeded bctl call $DEST "$p" $SES Export s svg)
"$EXPORT_TO_FD" "$BUS" "$p" svg "$T/flame.svg" 2>/dev/null || fail "ExportToFd of a large export failed"
(( $(stat -c %s "$T/flame.svg") > 4096 )) || fail "the svg export is not above the limit"
python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$T/flame.svg" ||
	fail "the svg export through ExportToFd is not well-formed XML"
ok "Export above MaxExportBytes: LimitsExceeded ($msg); ExportToFd has no limit"
p=$(start_session "$target" 99 30000000) # far longer than a loaded machine takes to call Export
msg=$(expect_error org.profd.Profiler1.Error.NotReady bctl call $DEST "$p" $SES Export s folded)
ok "Export while sampling: NotReady: $msg"
bctl call $DEST "$p" $SES Release
expect_error org.freedesktop.DBus.Error.UnknownObject \
	bctl call $DEST /org/profd/Profiler1/session/0000000000000000 $SES Stop >/dev/null
expect_error org.profd.Profiler1.Error.InvalidRecord mgr SubmitRun s '{' >/dev/null
expect_error org.profd.Profiler1.Error.NoSuchRun mgr GetRun s no-such-run >/dev/null
ok "unknown session, malformed record, unknown run"

# a thread id stands for its process
spawn_workload 2 "$WORKLOAD_SPLIT" 300 2
threaded=$SPAWNED
tid=$(ls "/proc/$threaded/task" | grep -vx "$threaded" | head -n 1)
p=$(start_session "$tid" 99 300000)
[[ $(prop "$p" Pid) == "$threaded" ]] || fail "a session on thread $tid profiles pid $(prop "$p" Pid), not its process $threaded"
[[ $(wait_finished "$p") == completed ]] || fail "the session on a thread id failed: $(prop "$p" Error)"
ok "a thread id stands for its process"

kill -0 "$PROFD_PID" || fail "profd died"
[[ $(bctl get-property $DEST $MGR_PATH $MGR Version) == "s \"$(${PROFD} --version | cut -d' ' -f2)\"" ]] ||
	fail "profd stopped answering"
ok "profd still serves"
