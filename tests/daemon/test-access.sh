#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Access control (DESIGN.md §6): uid 65534 may profile only its own dumpable
# processes and sees, stops and deletes only its own sessions and runs; root
# may do everything.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}"

start_bus
start_profd

nobody_mgr() {
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR "$@"
}

spawn_workload "$WORKLOAD_SPLIT" 120 1
root_target=$SPAWNED
spawn_workload "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 120 1
own_target=$SPAWNED
spawn "${AS_NOBODY[@]}" /usr/bin/python3 -c '
import ctypes, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
time.sleep(20)'
undumpable=$SPAWNED
# the /proc files of a process that is not dumpable belong to root: python (uid 65534) made the call
undumpable_ready() {
	runs_program "$undumpable" /usr/bin/python3 && [[ $(stat -c %u "/proc/$undumpable/status") == 0 ]]
}
wait_until 30 undumpable_ready || fail "python did not make itself non-dumpable"

msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
	nobody_mgr StartSession 'uuta{sv}' "$root_target" 99 1000000 0)
[[ $msg == *"another user"* ]] || fail "denial does not say why: $msg"
ok "uid 65534 cannot profile root's process: $msg"

msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
	nobody_mgr StartSession 'uuta{sv}' "$undumpable" 99 1000000 0)
[[ $msg == *dumpable* ]] || fail "denial of a non-dumpable process does not say why: $msg"
ok "uid 65534 cannot profile its own non-dumpable process"

own=$(nobody_mgr StartSession 'uuta{sv}' "$own_target" 199 800000 0 | awk '{ print $3 }' | tr -d '"')
[[ -n $own ]] || fail "uid 65534 could not profile its own process"
root_session=$(start_session "$root_target" 99 800000)

# each sees its own; root sees both
nobody_list=$(nobody_mgr ListSessions)
[[ $nobody_list == *"$own"* && $nobody_list != *"$root_session"* ]] ||
	fail "uid 65534 lists the wrong sessions: $nobody_list"
root_list=$(mgr ListSessions)
[[ $root_list == *"$own"* && $root_list == *"$root_session"* ]] ||
	fail "root does not list every session: $root_list"
expect_error org.freedesktop.DBus.Error.UnknownObject \
	as_nobody busctl --address="$BUS" call $DEST "$root_session" $SES Stop >/dev/null
expect_error org.freedesktop.DBus.Error.UnknownObject \
	as_nobody busctl --address="$BUS" get-property $DEST "$root_session" $SES State >/dev/null
ok "sessions: each uid sees only its own, root sees all"

[[ $(wait_finished "$own") == completed ]] || fail "uid 65534's session failed: $(prop "$own" Error)"
[[ $(wait_finished "$root_session") == completed ]] || fail "root's session failed"
as_nobody busctl --address="$BUS" call $DEST "$own" $SES Export s folded >/dev/null ||
	fail "uid 65534 cannot export its own session"
own_run=$(prop "$own" RunId)
root_run=$(prop "$root_session" RunId)
ok "uid 65534 profiled its own process"

# runs: ownership follows the submitter (or the session's owner)
sparse_id=$(nobody_mgr SubmitRun s "$(cat "$FIXTURES_DIR/valid/sparse.json")" | cut -d' ' -f2 | tr -d '"')
full_id=$(mgr SubmitRun s "$(cat "$FIXTURES_DIR/valid/full.json")" | cut -d' ' -f2 | tr -d '"')
nobody_runs=$(nobody_mgr ListRuns)
[[ $nobody_runs == *"$sparse_id"* && $nobody_runs == *"$own_run"* ]] ||
	fail "uid 65534 does not see its runs: $nobody_runs"
[[ $nobody_runs != *"$full_id"* && $nobody_runs != *"$root_run"* ]] ||
	fail "uid 65534 sees root's runs: $nobody_runs"
expect_error org.profd.Profiler1.Error.NoSuchRun nobody_mgr GetRun s "$full_id" >/dev/null
expect_error org.profd.Profiler1.Error.NoSuchRun nobody_mgr DeleteRun s "$root_run" >/dev/null
# run ids are per owner: submitting root's id stores uid 65534's own run, root's is untouched
[[ $(nobody_mgr SubmitRun s "$(cat "$FIXTURES_DIR/valid/sparse.json" | sed "s/$sparse_id/$full_id/")" |
	cut -d' ' -f2 | tr -d '"') == "$full_id" ]] || fail "uid 65534 cannot use an id root uses"
nobody_mgr GetRun s "$full_id" | grep -q '\\"status\\":\\"failed\\"' ||
	fail "uid 65534 does not get its own run under the shared id"
mgr GetRun s "$full_id" | grep -q '\\"status\\":\\"completed\\"' || fail "root's run was replaced"
nobody_mgr DeleteRun s "$full_id" || fail "uid 65534 cannot delete its run under the shared id"
mgr GetRun s "$full_id" >/dev/null || fail "root's run is gone"
mgr GetRun s "$root_run" >/dev/null || fail "root's session run is gone"
mgr GetRun s "$sparse_id" >/dev/null || fail "root cannot read uid 65534's run"
nobody_mgr DeleteRun s "$sparse_id" || fail "uid 65534 cannot delete its own run"
ok "runs: uid 65534 cannot read, replace or delete root's; root reads all"

# --- kernel frames (#17 item 4): only root, or everyone while perf_event_paranoid <= 1
pprof_kernel_addresses() { # PPROF_GZ: how many locations and mappings lie in the kernel's half
	python3 - "$1" <<'EOP'
import gzip, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        n, t = key >> 3, key & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif t == 2:
            l, i = varint(b, i)
            v, i = b[i:i + l], i + l
        elif t == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"wire type {t}")
        yield n, v
kernel = 0
for n, v in fields(gzip.open(sys.argv[1]).read()):
    # Profile.mapping (3): memory_start (2); Profile.location (4): address (3)
    if n in (3, 4):
        for m, x in fields(v):
            if (n, m) in ((3, 2), (4, 3)) and x >= 0xffff800000000000:
                kernel += 1
print(kernel)
EOP
}
session_exports() { # AS... PID KERNEL(-|true|false) DIR: a finished session's exports into DIR
	local as=("${@:1:$#-3}") pid=${@: -3:1} kernel=${@: -2:1} dir=${!#} path opts=(0)
	[[ $kernel == - ]] || opts=(1 kernel b "$kernel")
	path=$("${as[@]}" busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
		"$pid" 999 30000000 "${opts[@]}" | awk '{ print $3 }' | tr -d '"')
	wait_until 60 eval '(($(prop "$path" SamplesCaptured) >= 200))' || fail "the session took no samples"
	bctl call $DEST "$path" $SES Stop
	[[ $(wait_finished "$path") == completed ]] || fail "a session failed: $(prop "$path" Error)"
	"${as[@]}" mkdir -p "$dir"
	for f in pprof folded firefox speedscope svg metrics record; do
		"${as[@]}" "$EXPORT_TO_FD" "$BUS" "$path" $f "$dir/$f" 2>/dev/null || fail "export $f failed"
	done
}
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
spawn "${AS_NOBODY[@]}" "$WORKLOAD_SYSCALLS" 300
nobody_syscalls=$SPAWNED
wait_until 30 runs_program "$nobody_syscalls" "$WORKLOAD_SYSCALLS" || fail "the workload did not start"
spawn "$WORKLOAD_SYSCALLS" 300
root_syscalls=$SPAWNED
wait_until 30 runs_program "$root_syscalls" "$WORKLOAD_SYSCALLS" || fail "the workload did not start"
mkdir -m 777 "$T/k"
session_exports "$root_syscalls" true "$T/k/root"
(($(pprof_kernel_addresses "$T/k/root/pprof") > 0)) || fail "root's session has no kernel frames: the check cannot tell"
if ((paranoid > 1)); then
	msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
		nobody_mgr StartSession 'uuta{sv}' "$nobody_syscalls" 99 1000000 1 kernel b true)
	session_exports "${AS_NOBODY[@]}" "$nobody_syscalls" - "$T/k/nobody"
	(($(pprof_kernel_addresses "$T/k/nobody/pprof") == 0)) || fail "uid 65534's pprof has kernel addresses"
	! grep -qE 'kallsyms|0x[fF]{4}[89a-fA-F][0-9a-fA-F]{11}' "$T"/k/nobody/{folded,firefox,speedscope,svg,metrics,record} ||
		fail "an export of uid 65534 names the kernel or a kernel address"
	ok "kernel frames (paranoid $paranoid): root gets them, uid 65534 gets none by default and AccessDenied when asking: $msg"
else
	session_exports "${AS_NOBODY[@]}" "$nobody_syscalls" true "$T/k/nobody"
	(($(pprof_kernel_addresses "$T/k/nobody/pprof") > 0)) || fail "uid 65534 gets no kernel frames at paranoid $paranoid"
	ok "kernel frames (paranoid $paranoid): uid 65534 may have them, as perf would let it"
fi

# --- the ptrace rules (#17 item 6): every uid and gid the caller's, no capabilities, dumpable
as_root_then() { # PYTHON: run PYTHON (setting credentials) in a process of root's, then spin
	rm -f "$T/k/creds-set"
	spawn /usr/bin/python3 -c "
import ctypes, os, time
libc = ctypes.CDLL(None)
$1
libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: changing credentials cleared it
open('$T/k/creds-set', 'w').close()
end = time.time() + 30
while time.time() < end:
	pass"
	wait_until 120 test -e "$T/k/creds-set" || fail "the target did not set its credentials"
}
as_root_then "os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 0)"
msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied nobody_mgr StartSession 'uuta{sv}' "$SPAWNED" 99 300000 0)
[[ $msg == *"another user"* ]] || fail "a saved uid 0 is refused for the wrong reason: $msg"
as_root_then "os.setgroups([]); os.setresgid(65534, 0, 65534); os.setresuid(65534, 65534, 65534)"
msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied nobody_mgr StartSession 'uuta{sv}' "$SPAWNED" 99 300000 0)
[[ $msg == *group* ]] || fail "an effective gid 0 is refused for the wrong reason: $msg"
as_root_then "libc.prctl(8, 1, 0, 0, 0); os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)"
grep -q '^CapPrm:\s*0*[1-9a-f]' "/proc/$SPAWNED/status" || fail "the capable target kept no capabilities"
msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied nobody_mgr StartSession 'uuta{sv}' "$SPAWNED" 99 300000 0)
[[ $msg == *capabilities* ]] || fail "permitted capabilities are refused for the wrong reason: $msg"
as_root_then "import threading
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()  # this thread stays root
libc.syscall(116, 0, None)  # setgroups(2), setresgid(2), setresuid(2): the calling thread only
libc.syscall(119, 65534, 65534, 65534)
libc.syscall(117, 65534, 65534, 65534)"
grep -q '^Uid:\s*65534\s' "/proc/$SPAWNED/status" || fail "the main thread did not drop to uid 65534"
msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied nobody_mgr StartSession 'uuta{sv}' "$SPAWNED" 99 300000 0)
[[ $msg == *"another user"* ]] || fail "a thread of root's in the target is refused for the wrong reason: $msg"
ok "refused: a saved uid 0, an effective gid not the caller's, permitted capabilities, a thread of root's"

# credentials that change while sampling: the session ends, nothing from after the change is kept
spawn "${AS_NOBODY[@]}" "$WORKLOAD_CRED_CHANGE" 300
changer=$SPAWNED
usr1_caught() { (((16#$(awk '/^SigCgt:/ { print $2 }' "/proc/$changer/status") & 0x200) != 0)); }
wait_until 30 usr1_caught || fail "the workload did not start"
path=$(nobody_mgr StartSession 'uuta{sv}' "$changer" 499 20000000 0 | awk '{ print $3 }' | tr -d '"')
# a window with samples of before_change() first
wait_until 30 eval '(($(prop "$path" SamplesCaptured) >= 20))' || fail "the session took no samples"
kill -USR1 "$changer"
[[ $(wait_finished "$path") == completed ]] || fail "the session of a target that changed failed: $(prop "$path" Error)"
# before its 20 s window, however long a loaded machine took to get here, and ended by the change
(($(prop "$path" DurationUSec) < 20000000)) || fail "the session went on after its target stopped being dumpable"
as_nobody busctl --address="$BUS" call $DEST "$path" $SES GetMetrics | grep -q 'end_reason.*credentials-changed' ||
	fail "the metrics do not say the credentials changed"
as_nobody "$EXPORT_TO_FD" "$BUS" "$path" folded "$T/k/changed.folded" 2>/dev/null || fail "export failed"
grep -q before_change "$T/k/changed.folded" || fail "the samples from before the change are lost"
! grep -q after_change "$T/k/changed.folded" ||
	fail "samples from after the target stopped being dumpable were kept: $(grep after_change "$T/k/changed.folded")"
ok "a target that stops being dumpable ends its session; only samples from before are kept"
